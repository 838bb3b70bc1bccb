package main

import (
	"net/url"
	"os"

	"fyne.io/fyne/v2"

	"h3studio/engine/credstore"
	"h3studio/engine/hfhub"
	"h3studio/ui/studio"
)

// newModels is the model manager of the Models window: the HF environment,
// the token in the Keychain (a 0600 file elsewhere), the records beside
// settings.json, and the studio switched to a snapshot once it is ready.
func newModels(a fyne.App, s *studio.Studio, prefs *prefs) *studio.Models {
	rec := hfhub.LoadRecords(hfhub.DefaultRecordsPath())
	home, _ := os.UserHomeDir()
	return studio.NewModels(studio.ModelsOptions{
		Env:     hfhub.EnvFrom(os.Getenv),
		Tokens:  credstore.Default,
		Records: rec,
		Folders: func() []string {
			prefs.mu.Lock()
			dir := prefs.ModelDir
			prefs.mu.Unlock()
			return append([]string{dir}, hfhub.UsualFolders(home)...)
		},
		OpenURL: func(u string) {
			if pu, err := url.Parse(u); err == nil {
				a.OpenURL(pu)
			}
		},
		Trash: moveToTrash,
		UseModel: func(dir string) {
			s.Model().Use(dir)
			prefs.SetModelDir(dir)
		},
	})
}
