//go:build darwin

package credstore

import (
	"errors"
	"fmt"

	"github.com/zalando/go-keyring"
)

// keychain stores secrets as generic passwords in the login Keychain
// (go-keyring drives /usr/bin/security; no cgo).
type keychain struct{}

func platformStore() Store { return keychain{} }

func (keychain) Get(service, account string) (string, error) {
	if err := checkName(service, account); err != nil {
		return "", err
	}
	s, err := keyring.Get(service, account)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("credstore: keychain: %w", err)
	}
	return s, nil
}

func (keychain) Set(service, account, secret string) error {
	if err := checkName(service, account); err != nil {
		return err
	}
	if err := keyring.Set(service, account, secret); err != nil {
		return fmt.Errorf("credstore: keychain: %w", err)
	}
	return nil
}

func (keychain) Delete(service, account string) error {
	if err := checkName(service, account); err != nil {
		return err
	}
	err := keyring.Delete(service, account)
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("credstore: keychain: %w", err)
	}
	return nil
}
