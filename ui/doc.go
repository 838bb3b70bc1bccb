// Package ui is H3 Studio's Fyne front end: the main window, its panels and
// menus. It is the only code that crosses from the studio's goroutines into
// Fyne's (see ui/studio for the Fyne-free state it renders).
package ui
