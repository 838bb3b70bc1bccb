package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Theme is H3 Studio's look: Fyne's default theme with macOS proportions, one
// accent colour (indigo), and calm window and panel greys for both
// appearances. The variant (light or dark) is the system's.
type Theme struct{ fyne.Theme }

// NewTheme returns the studio theme.
func NewTheme() fyne.Theme { return Theme{theme.DefaultTheme()} }

// Custom colour names.
const (
	colorPanel  fyne.ThemeColorName = "h3Panel"  // panel backgrounds
	colorStage  fyne.ThemeColorName = "h3Stage"  // behind the picture
	colorSubtle fyne.ThemeColorName = "h3Subtle" // secondary text
	colorWarn   fyne.ThemeColorName = "h3Warn"
)

var (
	accent     = color.NRGBA{0x5e, 0x5c, 0xe6, 0xff} // systemIndigo
	accentDark = color.NRGBA{0x7d, 0x7a, 0xff, 0xff}
)

// Color implements fyne.Theme.
func (t Theme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	dark := v == theme.VariantDark
	pick := func(light, darkC color.NRGBA) color.Color {
		if dark {
			return darkC
		}
		return light
	}
	switch n {
	case theme.ColorNamePrimary, theme.ColorNameHyperlink:
		return pick(accent, accentDark)
	case theme.ColorNameFocus:
		return pick(color.NRGBA{0x5e, 0x5c, 0xe6, 0x60}, color.NRGBA{0x7d, 0x7a, 0xff, 0x70})
	case theme.ColorNameSelection:
		return pick(color.NRGBA{0x5e, 0x5c, 0xe6, 0x30}, color.NRGBA{0x7d, 0x7a, 0xff, 0x40})
	case theme.ColorNameBackground:
		return pick(color.NRGBA{0xec, 0xec, 0xee, 0xff}, color.NRGBA{0x1c, 0x1c, 0x1f, 0xff})
	case colorPanel:
		return pick(color.NRGBA{0xfa, 0xfa, 0xfb, 0xff}, color.NRGBA{0x26, 0x26, 0x2a, 0xff})
	case theme.ColorNameInputBackground:
		return pick(color.NRGBA{0xf0, 0xf0, 0xf3, 0xff}, color.NRGBA{0x31, 0x31, 0x36, 0xff})
	case theme.ColorNameMenuBackground, theme.ColorNameOverlayBackground:
		return pick(color.NRGBA{0xfb, 0xfb, 0xfc, 0xff}, color.NRGBA{0x2b, 0x2b, 0x30, 0xff})
	case theme.ColorNameSeparator:
		return pick(color.NRGBA{0xd8, 0xd8, 0xdd, 0xff}, color.NRGBA{0x3a, 0x3a, 0x40, 0xff})
	case theme.ColorNameButton:
		return pick(color.NRGBA{0xe4, 0xe4, 0xe9, 0xff}, color.NRGBA{0x3a, 0x3a, 0x40, 0xff})
	case theme.ColorNameForeground:
		return pick(color.NRGBA{0x1d, 0x1d, 0x1f, 0xff}, color.NRGBA{0xec, 0xec, 0xf0, 0xff})
	case theme.ColorNameDisabled:
		// Low-importance labels use it too: legible, but clearly secondary.
		return pick(color.NRGBA{0x8e, 0x8e, 0x96, 0xff}, color.NRGBA{0x80, 0x80, 0x8a, 0xff})
	case colorSubtle, theme.ColorNamePlaceHolder:
		return pick(color.NRGBA{0x6e, 0x6e, 0x76, 0xff}, color.NRGBA{0x9a, 0x9a, 0xa4, 0xff})
	case colorStage:
		return color.NRGBA{0x0b, 0x0b, 0x0e, 0xff}
	case colorWarn, theme.ColorNameWarning:
		return pick(color.NRGBA{0xc2, 0x6a, 0x00, 0xff}, color.NRGBA{0xff, 0xa6, 0x3d, 0xff})
	case theme.ColorNameError:
		return pick(color.NRGBA{0xd7, 0x2c, 0x2c, 0xff}, color.NRGBA{0xff, 0x5f, 0x57, 0xff})
	case theme.ColorNameSuccess:
		return pick(color.NRGBA{0x1f, 0x9d, 0x55, 0xff}, color.NRGBA{0x32, 0xd7, 0x4b, 0xff})
	}
	return t.Theme.Color(n, v)
}

// Size implements fyne.Theme: macOS's 13-point text.
func (t Theme) Size(n fyne.ThemeSizeName) float32 {
	switch n {
	case theme.SizeNameText:
		return 13
	case theme.SizeNameCaptionText:
		return 11
	case theme.SizeNameSubHeadingText:
		return 15
	case theme.SizeNameHeadingText:
		return 20
	case theme.SizeNameInputRadius, theme.SizeNameSelectionRadius:
		return 6
	case theme.SizeNameScrollBarSmall:
		return 3
	}
	return t.Theme.Size(n)
}
