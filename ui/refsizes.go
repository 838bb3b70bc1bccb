package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
)

// refSizeControl is the settings' choice of how Ref2VA references are
// sized (studio.RefSizes), with the cost of the choice under it.
type refSizeControl struct {
	sel  *widget.Select
	cost *widget.Label
}

func newRefSizeControl(c *compose) *refSizeControl {
	r := &refSizeControl{cost: subtle("")}
	r.sel = choiceSelect(c, studio.RefSizes, func(rs studio.RefSize) string { return rs.Name }, c.w.s.Compose().SetRefSize)
	r.cost.Wrapping = fyne.TextWrapWord
	return r
}

// refresh shows the draft's choice.
func (r *refSizeControl) refresh(st studio.Settings) {
	rs := studio.RefSizeOf(st)
	r.sel.SetSelected(rs.Name)
	r.cost.SetText(rs.Cost)
}
