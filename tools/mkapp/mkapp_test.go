package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plistValue is a parsed property-list value.
type plistValue any

// parsePlist decodes an XML property list (dict, array, string, true/false,
// integer) strictly enough to check the bundle's.
func parsePlist(r io.Reader) (plistValue, error) {
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "plist" {
			v, err := plistElem(d)
			return v, err
		}
	}
}

func nextStart(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.EndElement:
			return xml.StartElement{}, io.EOF
		}
	}
}

func plistElem(d *xml.Decoder) (plistValue, error) {
	se, err := nextStart(d)
	if err != nil {
		return nil, err
	}
	return plistValue2(d, se)
}

func plistValue2(d *xml.Decoder, se xml.StartElement) (plistValue, error) {
	switch se.Name.Local {
	case "dict":
		m := map[string]plistValue{}
		for {
			k, err := nextStart(d)
			if err == io.EOF {
				return m, nil
			}
			if err != nil {
				return nil, err
			}
			if k.Name.Local != "key" {
				return nil, fmt.Errorf("plist: <%s> where a <key> belongs", k.Name.Local)
			}
			var key string
			if err := d.DecodeElement(&key, &k); err != nil {
				return nil, err
			}
			v, err := plistElem(d)
			if err != nil {
				return nil, fmt.Errorf("plist: value of %s: %w", key, err)
			}
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("plist: duplicate key %s", key)
			}
			m[key] = v
		}
	case "array":
		var a []plistValue
		for {
			e, err := nextStart(d)
			if err == io.EOF {
				return a, nil
			}
			if err != nil {
				return nil, err
			}
			v, err := plistValue2(d, e)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case "string", "integer":
		var s string
		err := d.DecodeElement(&s, &se)
		return s, err
	case "true", "false":
		d.Skip()
		return se.Name.Local == "true", nil
	}
	return nil, fmt.Errorf("plist: unknown element <%s>", se.Name.Local)
}

func TestAssembleBundle(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "h3studio")
	os.WriteFile(bin, []byte("#!/bin/sh\necho h3studio\n"), 0o755)
	app := filepath.Join(dir, "H3 Studio.app")
	if err := Assemble(app, bin, "../../packaging/macos/Info.plist", "1.2.3", "1.2.3.7"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Contents/Info.plist", "Contents/PkgInfo", "Contents/MacOS/h3studio", "Contents/Resources/AppIcon.icns"} {
		if _, err := os.Stat(filepath.Join(app, f)); err != nil {
			t.Errorf("bundle lacks %s", f)
		}
	}
	if st, _ := os.Stat(filepath.Join(app, "Contents/MacOS/h3studio")); st == nil || st.Mode()&0o111 == 0 {
		t.Error("executable is not executable")
	}
	f, _ := os.Open(filepath.Join(app, "Contents/Info.plist"))
	defer f.Close()
	v, err := parsePlist(f)
	if err != nil {
		t.Fatalf("Info.plist does not parse: %v", err)
	}
	p := v.(map[string]plistValue)
	want := map[string]plistValue{
		"CFBundleIdentifier": "studio.h3.H3Studio", "CFBundleExecutable": "h3studio", "CFBundleName": "H3 Studio",
		"CFBundlePackageType": "APPL", "CFBundleShortVersionString": "1.2.3", "CFBundleVersion": "1.2.3.7",
		"CFBundleIconFile": "AppIcon", "LSMinimumSystemVersion": "14.0", "NSHighResolutionCapable": true,
		"NSRequiresAquaSystemAppearance": false,
	}
	for k, w := range want {
		if p[k] != w {
			t.Errorf("%s = %v, want %v", k, p[k], w)
		}
	}
	types := map[string]bool{}
	for _, dt := range p["CFBundleDocumentTypes"].([]plistValue) {
		for _, u := range dt.(map[string]plistValue)["LSItemContentTypes"].([]plistValue) {
			types[u.(string)] = true
		}
	}
	for _, u := range []string{"public.png", "public.jpeg", "public.heic", "public.mpeg-4", "com.apple.quicktime-movie", "com.microsoft.waveform-audio", "public.mp3"} {
		if !types[u] {
			t.Errorf("document types lack %s", u)
		}
	}
	if strings.Contains(fmt.Sprint(p), "{{") {
		t.Error("template placeholders left in Info.plist")
	}
	b, _ := os.ReadFile(filepath.Join(app, "Contents/Resources/AppIcon.icns"))
	icons, err := DecodeICNS(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range icnsSizes {
		img := icons[s.typ]
		if img == nil || img.Bounds().Dx() != s.edge || img.Bounds().Dy() != s.edge {
			t.Errorf("icon %s: want %d px, have %v", s.typ, s.edge, img)
		}
	}
	// Assembling again replaces the bundle.
	if err := Assemble(app, bin, "../../packaging/macos/Info.plist", "1.2.4", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(app + ".partial"); err == nil {
		t.Error("partial bundle left behind")
	}
}
