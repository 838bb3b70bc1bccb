package hfhub

import (
	"errors"
	"fmt"
	"time"
)

// Error is a Hub answer that is not a success, with the Hub's own error code.
type Error struct {
	Op         string        // what was asked ("tree", "resolve FL2VA/…")
	Status     int           // HTTP status
	Code       string        // X-Error-Code: GatedRepo, RepoNotFound, RevisionNotFound, EntryNotFound
	Message    string        // X-Error-Message
	RetryAfter time.Duration // from Retry-After on 429/503
	Repo       string
}

func (e *Error) Error() string {
	switch {
	case e.Code == "GatedRepo" && e.Status == 401:
		return fmt.Sprintf("%s: %s is gated: log in with a Hugging Face token (HF_TOKEN, or the token set in H3 Studio) after accepting the licence at %s", e.Op, e.Repo, PageURL(e.Repo))
	case e.Code == "GatedRepo":
		return fmt.Sprintf("%s: your token has no access to the gated %s: accept the licence at %s (access can only be requested in a browser)", e.Op, e.Repo, PageURL(e.Repo))
	case e.Code == "RepoNotFound" || (e.Status == 401 && e.Code == ""):
		return fmt.Sprintf("%s: repository %s not found (or private: a token with access is needed)", e.Op, e.Repo)
	case e.Code == "RevisionNotFound":
		return fmt.Sprintf("%s: revision not found in %s: %s", e.Op, e.Repo, e.Message)
	case e.Code == "EntryNotFound":
		return fmt.Sprintf("%s: not in %s: %s", e.Op, e.Repo, e.Message)
	}
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%s: the Hub answered %d (%s)", e.Op, e.Status, msg)
}

// Gated reports whether err is a gated-repository refusal (401: no token,
// 403: the licence is not accepted for this token).
func Gated(err error) bool {
	var he *Error
	return errors.As(err, &he) && he.Code == "GatedRepo"
}

// NotFound reports whether err says the repo, revision or file does not exist.
func NotFound(err error) bool {
	var he *Error
	return errors.As(err, &he) && (he.Code == "RepoNotFound" || he.Code == "RevisionNotFound" || he.Code == "EntryNotFound")
}

// retryable reports whether a Hub answer is worth asking again.
func (e *Error) retryable() bool {
	return e.Status == 429 || e.Status == 408 || e.Status >= 500
}

// PageURL is the model's page on the Hub, where its licence is accepted.
func PageURL(repo string) string { return "https://huggingface.co/" + repo }

// TokenPageURL is where a user creates a read token.
const TokenPageURL = "https://huggingface.co/settings/tokens"
