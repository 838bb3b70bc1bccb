// Package credstore keeps small secrets (API tokens) out of settings and logs:
// in the macOS Keychain on darwin, and in a mode-0600 file elsewhere.
//
// A secret is named by a service ("h3studio.huggingface") and an account
// ("default"). Get of an absent secret returns ErrNotFound.
package credstore

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned by Get and Delete when no secret is stored under the name.
var ErrNotFound = errors.New("credstore: no such secret")

// Store is a secret store.
type Store interface {
	Get(service, account string) (string, error)
	Set(service, account, secret string) error
	Delete(service, account string) error
}

// Default is the platform's store: the Keychain on darwin, a 0600 file elsewhere.
var Default Store = platformStore()

// Get returns the secret stored under service/account in the default store.
func Get(service, account string) (string, error) { return Default.Get(service, account) }

// Set stores secret under service/account in the default store, replacing any previous one.
func Set(service, account, secret string) error { return Default.Set(service, account, secret) }

// Delete removes the secret stored under service/account from the default store.
func Delete(service, account string) error { return Default.Delete(service, account) }

func checkName(service, account string) error {
	if service == "" || account == "" {
		return fmt.Errorf("credstore: service and account must not be empty (got %q, %q)", service, account)
	}
	if strings.ContainsAny(service+account, "\x00\n") {
		return fmt.Errorf("credstore: service and account must not contain NUL or newline")
	}
	return nil
}
