package studio

import "fmt"

// A Choice is one way out a notice offers, shown as a button: when the user
// takes it, Do runs on a background task (never the UI thread: it may touch
// a slow or vanished disk).
type Choice struct {
	Label string
	// AsksFolder: the window asks for a folder first and passes its path
	// to Do; nothing happens when the user cancels.
	AsksFolder bool
	// Stays keeps the notice up after the choice (a choice that only
	// shows something, such as Show File).
	Stays bool
	Do    func(folder string)
}

// Offer adds a notice with choices. It stays until a choice is taken or it
// is dismissed; the ID names it for Choose.
func (s *Studio) Offer(level NoticeLevel, text string, choices ...Choice) int {
	var id int
	s.update(func() {
		s.noticeLocked(level, text, "")
		id = s.nextNotice
		s.notices[len(s.notices)-1].Choices = choices
	})
	return id
}

// Choose takes choice i of notice id (folder: the folder asked for by an
// AsksFolder choice). The notice goes unless the choice Stays. A notice
// that is gone, or an index it does not have, is an error.
func (s *Studio) Choose(id, i int, folder string) error {
	var c Choice
	var err error
	s.update(func() {
		for k, n := range s.notices {
			if n.ID != id {
				continue
			}
			switch {
			case i < 0 || i >= len(n.Choices):
				err = fmt.Errorf("studio: notice %d has no choice %d", id, i)
			case n.Choices[i].AsksFolder && folder == "":
				err = fmt.Errorf("studio: %q needs a folder", n.Choices[i].Label)
			default:
				c = n.Choices[i]
				if !c.Stays {
					s.notices = append(s.notices[:k:k], s.notices[k+1:]...)
				}
			}
			return
		}
		err = fmt.Errorf("studio: no notice %d", id)
	})
	if err != nil {
		return err
	}
	if c.Do != nil {
		s.opts.Go(func() { c.Do(folder) })
	}
	return nil
}

// LibraryProblem is a remembered library folder that can't be used at
// start (its disk is not connected, it was moved, it can't be opened), for
// OfferLibraryChoice.
type LibraryProblem struct {
	Dir  string // the remembered folder
	Text string // what happened and which library is used meanwhile
	// Default is the default library, offered as Use Default Library
	// ("" when it can't be used either).
	Default string
	// Check says whether Dir can be used now without making anything (the
	// disk is back); it must never create Dir.
	Check func(dir string) error
	// Remember records the library for the next start ("" is the
	// default).
	Remember func(dir string)
}

// OfferLibraryChoice shows a library problem with its ways out: Choose
// Library… (another folder, remembered), Use Default Library (and forget
// the remembered one) and Retry (use the remembered folder once its disk is
// back; until then the notice comes back saying it is still missing).
func (s *Studio) OfferLibraryChoice(p LibraryProblem) int {
	remember := func(dir string) {
		if p.Remember != nil {
			p.Remember(dir)
		}
	}
	use := func(dir, remembered string, done string) {
		if err := s.SetLibrary(dir); err != nil {
			q := p
			q.Text = fmt.Sprintf("The folder %s can't hold the library (%v).", dir, err)
			s.OfferLibraryChoice(q)
			return
		}
		remember(remembered)
		s.Notify(Info, done)
	}
	choices := []Choice{{Label: "Choose Library…", AsksFolder: true, Do: func(dir string) {
		use(dir, dir, "Takes are saved in "+dir+" from now on.")
	}}}
	if p.Default != "" {
		choices = append(choices, Choice{Label: "Use Default Library", Do: func(string) {
			use(p.Default, "", "Takes are saved in the default library "+p.Default+" from now on.")
		}})
	}
	choices = append(choices, Choice{Label: "Retry", Do: func(string) {
		if err := p.Check(p.Dir); err != nil {
			q := p
			q.Text = fmt.Sprintf("The library folder %s still can't be used (%v).", p.Dir, err)
			s.OfferLibraryChoice(q)
			return
		}
		use(p.Dir, p.Dir, "The library "+p.Dir+" is back: takes are saved there again.")
	}})
	return s.Offer(Warn, p.Text, choices...)
}
