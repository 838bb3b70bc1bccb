package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// diceIcon is the seed's "roll a new seed" button.
var diceIcon = svgIcon("dice", `<path fill="#000" d="M6 3h12a3 3 0 0 1 3 3v12a3 3 0 0 1-3 3H6a3 3 0 0 1-3-3V6a3 3 0 0 1 3-3zm0 2a1 1 0 0 0-1 1v12a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1V6a1 1 0 0 0-1-1H6z"/>
<circle fill="#000" cx="8.5" cy="8.5" r="1.6"/><circle fill="#000" cx="15.5" cy="8.5" r="1.6"/>
<circle fill="#000" cx="12" cy="12" r="1.6"/><circle fill="#000" cx="8.5" cy="15.5" r="1.6"/><circle fill="#000" cx="15.5" cy="15.5" r="1.6"/>`)

// loopIcon marks the loop toggle.
var loopIcon = svgIcon("loop", `<path fill="#000" d="M7 7h10v3l4-4-4-4v3H5v6h2V7zm10 10H7v-3l-4 4 4 4v-3h12v-6h-2v4z"/>`)

// starIcon and starOutlineIcon mark starred takes.
var starIcon = svgIcon("star", `<path fill="#000" d="M12 17.3l6.2 3.7-1.6-7 5.4-4.7-7.1-.6L12 2 9.1 8.7 2 9.3l5.4 4.7-1.6 7z"/>`)

var starOutlineIcon = svgIcon("star-outline", `<path fill="#000" d="M22 9.2l-7.2-.6L12 2 9.2 8.6 2 9.2l5.5 4.7L5.8 21 12 17.3l6.2 3.7-1.6-7.1L22 9.2zM12 15.4l-3.8 2.3 1-4.3-3.3-2.9 4.4-.4L12 6.1l1.7 4 4.4.4-3.3 2.9 1 4.3-3.8-2.3z"/>`)

// chainIcon marks "continue from the last frame".
var chainIcon = svgIcon("chain", `<path fill="#000" d="M3.9 12a3.1 3.1 0 0 1 3.1-3.1h4V7H7a5 5 0 0 0 0 10h4v-1.9H7A3.1 3.1 0 0 1 3.9 12zM8 13h8v-2H8v2zm9-6h-4v1.9h4a3.1 3.1 0 0 1 0 6.2h-4V17h4a5 5 0 0 0 0-10z"/>`)

// svgIcon is a 24×24 icon drawn by the SVG elements body and recoloured by
// the theme; name (without .svg) names its resource.
func svgIcon(name, body string) fyne.Resource {
	svg := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">` + "\n" + body + "\n</svg>"
	return theme.NewThemedResource(&fyne.StaticResource{StaticName: name + ".svg", StaticContent: []byte(svg)})
}
