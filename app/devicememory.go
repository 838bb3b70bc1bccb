package main

import "h3studio/engine/compute"

// deviceMemory is a backend that reports another device's memory to the
// automatic memory mode (`generate --device-memory`): planning and
// testing how a take would run on a smaller Mac. Allocations are the
// backend's own.
type deviceMemory struct {
	compute.Backend
	memory, workingSet int64 // 0: the backend's own
}

// Device reports the given memory; the working set is the given one, else
// unknown (the planner's default for that memory).
func (d deviceMemory) Device() compute.DeviceInfo {
	i := d.Backend.Device()
	if d.memory > 0 {
		i.MemoryBytes, i.WorkingSetBytes = d.memory, 0
	}
	if d.workingSet > 0 {
		i.WorkingSetBytes = d.workingSet
	}
	return i
}
