//go:build !darwin

package credstore

func platformStore() Store { return &FileStore{Path: DefaultFilePath()} }
