// Command mkapp assembles the macOS application bundle "H3 Studio.app" from a
// built h3studio executable, the Info.plist template in packaging/macos and
// the icon in resources/ (converted to .icns in pure Go):
//
//	go run ./tools/mkapp -bin build/h3studio -version 0.1.0 -o "build/H3 Studio.app"
//
// Signing is the Makefile's job (codesign on macOS).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"h3studio/resources"
)

func main() {
	bin := flag.String("bin", "build/h3studio", "the h3studio `executable` to bundle")
	out := flag.String("o", "build/H3 Studio.app", "bundle `path` to write")
	version := flag.String("version", "0.1.0", "CFBundleShortVersionString")
	build := flag.String("build", "", "CFBundleVersion (default: the version with the date)")
	plist := flag.String("plist", "packaging/macos/Info.plist", "Info.plist `template`")
	flag.Parse()
	if *build == "" {
		*build = *version + "." + time.Now().UTC().Format("20060102")
	}
	if err := Assemble(*out, *bin, *plist, *version, *build); err != nil {
		fmt.Fprintln(os.Stderr, "mkapp:", err)
		os.Exit(1)
	}
	fmt.Println("mkapp: wrote", *out)
}

// Assemble writes the bundle at out (replacing an older one only once the
// new one is complete).
func Assemble(out, bin, plistTemplate, version, build string) error {
	tpl, err := os.ReadFile(plistTemplate)
	if err != nil {
		return err
	}
	tmp := out + ".partial"
	os.RemoveAll(tmp)
	contents := filepath.Join(tmp, "Contents")
	for _, d := range []string{"MacOS", "Resources"} {
		if err := os.MkdirAll(filepath.Join(contents, d), 0o755); err != nil {
			return err
		}
	}
	fail := func(err error) error {
		os.RemoveAll(tmp)
		return err
	}
	plist := strings.NewReplacer("{{VERSION}}", version, "{{BUILD}}", build).Replace(string(tpl))
	if err := os.WriteFile(filepath.Join(contents, "Info.plist"), []byte(plist), 0o644); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(contents, "PkgInfo"), []byte("APPL????"), 0o644); err != nil {
		return fail(err)
	}
	if err := copyFile(bin, filepath.Join(contents, "MacOS", "h3studio"), 0o755); err != nil {
		return fail(fmt.Errorf("executable: %w", err))
	}
	icon, err := png.Decode(bytes.NewReader(resources.Icon()))
	if err != nil {
		return fail(fmt.Errorf("icon: %w", err))
	}
	icns, err := EncodeICNS(icon)
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(contents, "Resources", "AppIcon.icns"), icns, 0o644); err != nil {
		return fail(err)
	}
	os.RemoveAll(out)
	return os.Rename(tmp, out)
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}
