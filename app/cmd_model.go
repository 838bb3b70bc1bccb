package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"h3studio/engine/credstore"
	"h3studio/engine/hfhub"
	"h3studio/engine/snapshot"
)

func init() {
	register(&command{name: "model", summary: "find, download and verify the MiniMax-H3 model (list, download, verify, path, token)", run: runModel})
}

// Exit statuses of `h3studio model`.
const (
	exitOK        = 0
	exitFailed    = 1
	exitInvalid   = 2
	exitCancelled = 130
)

func modelUsage(w io.Writer) {
	fmt.Fprintln(w, `usage: h3studio model COMMAND [options]
  list [--json] [FOLDER...]       snapshots on this disk: the HF cache ($HF_HUB_CACHE, $HF_HOME/hub),
                                  --local-dir folders given or in the usual places; no network
  download [--tasks t2va,fl2va,ref2va] [--revision REV] [--dir DIR] [--parallel N] [--json]
                                  fetch what the tasks need into the HF cache (or a plain folder),
                                  resuming partial files, verifying every byte before publishing it
  verify DIR|--revision REV [--online] [--repair] [--json]
                                  re-hash a snapshot against its recorded hashes (or the Hub's tree)
  path [--revision REV] [--task TASK]
                                  print the folder of the best complete snapshot
  token set|delete|status         keep a Hugging Face token in the Keychain (a 0600 file elsewhere);
                                  'set' reads it from standard input. HF_TOKEN wins when set.
Exit status: 0 done, 2 invalid request, 1 failure, 130 cancelled.`)
}

func runModel(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		modelUsage(stderr)
		if len(args) == 0 {
			return exitInvalid
		}
		return exitOK
	}
	env := hfhub.EnvFrom(os.Getenv)
	switch args[0] {
	case "list":
		return modelList(env, args[1:], stdout, stderr)
	case "download":
		return modelDownload(env, args[1:], stdout, stderr)
	case "verify":
		return modelVerify(env, args[1:], stdout, stderr)
	case "path":
		return modelPath(env, args[1:], stdout, stderr)
	case "token":
		return modelToken(env, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "h3studio model: unknown command %q\n", args[0])
	modelUsage(stderr)
	return exitInvalid
}

// interruptible is a context cancelled by SIGINT/SIGTERM.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// modelFolders are the folders discovery looks in besides the HF cache.
func modelFolders(rec *hfhub.Records, extra []string) []string {
	home, _ := os.UserHomeDir()
	out := append([]string{}, extra...)
	out = append(out, rec.Folders...)
	if p := loadPrefs(); p.ModelDir != "" {
		out = append(out, p.ModelDir)
	}
	return append(out, hfhub.UsualFolders(home)...)
}

func modelList(env hfhub.Env, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("model list", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return exitInvalid
	}
	rec := hfhub.LoadRecords(hfhub.DefaultRecordsPath())
	found := hfhub.Discover(env, modelFolders(rec, fs.Args()), rec)
	if *asJSON {
		out := struct {
			HubCache  string            `json:"hubCache"`
			Snapshots []hfhub.Installed `json:"snapshots"`
		}{env.HubCache, found}
		if out.Snapshots == nil {
			out.Snapshots = []hfhub.Installed{}
		}
		if err := printJSON(stdout, out); err != nil {
			return exitFailed
		}
		return exitOK
	}
	if len(found) == 0 {
		fmt.Fprintf(stdout, "No MiniMax-H3 snapshot found (looked in %s and the usual folders).\n", env.HubCache)
		fmt.Fprintln(stdout, "Download one with: h3studio model download --tasks t2va,fl2va")
		return exitOK
	}
	for _, in := range found {
		rev := in.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev == "" {
			rev = "?"
		}
		tasks := strings.Join(in.Tasks, ",")
		if tasks == "" {
			tasks = "none"
		}
		fmt.Fprintf(stdout, "%s\n  %s, revision %s, tasks %s, %s, %s", in.Path, in.Source, rev, tasks, snapshot.HumanBytes(in.Size), in.State)
		if in.Demo {
			fmt.Fprint(stdout, " (demo model)")
		}
		fmt.Fprintln(stdout)
		if len(in.Missing) > 0 {
			fmt.Fprintf(stdout, "  missing: %s\n", strings.Join(in.Missing, "; "))
		}
		if in.Partial > 0 {
			fmt.Fprintf(stdout, "  %s downloaded of files not finished yet\n", snapshot.HumanBytes(in.Partial))
		}
	}
	return exitOK
}

// hubClient is a client with the token resolved (HF_TOKEN, the stored token, the hf token file).
func hubClient(env hfhub.Env) (*hfhub.Client, hfhub.TokenSource) {
	tok, src := env.Token(credstore.Default)
	return hfhub.NewClient(env.Endpoint, tok), src
}

// exitFor maps an error to the exit status and prints it with a hint.
func exitFor(stderr io.Writer, what string, err error, src hfhub.TokenSource) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "h3studio model %s: cancelled; partial files are kept and the next run resumes them\n", what)
		return exitCancelled
	}
	fmt.Fprintf(stderr, "h3studio model %s: %v\n", what, err)
	switch {
	case hfhub.Gated(err):
		if src == hfhub.NoToken {
			fmt.Fprintf(stderr, "  accept the licence at %s, create a read token at %s,\n  then set HF_TOKEN or run `h3studio model token set`\n", hfhub.PageURL(hfhub.Repo), hfhub.TokenPageURL)
		} else {
			fmt.Fprintf(stderr, "  the token used (from %s) has no access: accept the licence at %s with the account it belongs to\n", src, hfhub.PageURL(hfhub.Repo))
		}
		return exitFailed
	case errors.Is(err, hfhub.ErrInvalid), hfhub.NotFound(err):
		return exitInvalid
	}
	return exitFailed
}

func modelDownload(env hfhub.Env, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("model download", stderr)
	tasks := fs.String("tasks", "t2va,fl2va", "comma-separated `tasks` to download for: t2va, fl2va, ref2va")
	rev := fs.String("revision", "main", "branch, tag or commit")
	dir := fs.String("dir", "", "write a plain `folder` instead of the HF cache (copies hard-linked)")
	parallel := fs.Int("parallel", 3, "files downloaded at once (1–4)")
	asJSON := fs.Bool("json", false, "print progress and the result as JSON lines")
	if err := fs.Parse(args); err != nil {
		return exitInvalid
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "h3studio model download: unexpected argument %q\n", fs.Arg(0))
		return exitInvalid
	}
	ts, err := hfhub.ParseTasks(*tasks)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio model download: %v\n", err)
		return exitInvalid
	}
	if *parallel < 1 || *parallel > 4 {
		fmt.Fprintf(stderr, "h3studio model download: --parallel %d: want 1 to 4\n", *parallel)
		return exitInvalid
	}
	if env.Offline {
		fmt.Fprintf(stderr, "h3studio model download: %v\n", hfhub.ErrOffline)
		return exitFailed
	}
	ctx, stop := interruptible()
	defer stop()
	release := hfhub.KeepAwake()
	defer release()
	client, src := hubClient(env)
	prog := &hfhub.Progress{}
	req := &hfhub.Request{Tasks: ts, Revision: *rev, Dir: *dir, HubCache: env.HubCache, Parallel: *parallel, Progress: prog}
	plan, err := hfhub.PlanDownload(ctx, client, req)
	if err != nil {
		return exitFor(stderr, "download", err, src)
	}
	if !*asJSON {
		fmt.Fprintf(stderr, "MiniMax-H3 %s for %s: %d files (%s), %s on disk, %s to download into %s\n", plan.Commit[:12], *tasks,
			len(plan.Files), snapshot.HumanBytes(plan.Total), snapshot.HumanBytes(plan.Held+plan.Partial), snapshot.HumanBytes(plan.Need), plan.Root())
	}
	done := make(chan struct{})
	go reportProgress(prog, done, stdout, stderr, *asJSON)
	res, err := plan.Run(ctx, client, req)
	close(done)
	if err != nil {
		return exitFor(stderr, "download", err, src)
	}
	rec := hfhub.LoadRecords(hfhub.DefaultRecordsPath())
	if res.Held == 0 {
		rec.MarkVerified(res.Root, res.Commit) // every byte was hashed on arrival
	}
	if *dir != "" {
		rec.AddFolder(res.Root)
	}
	if *asJSON {
		json.NewEncoder(stdout).Encode(struct {
			Done bool `json:"done"`
			*hfhub.Result
		}{true, res})
	} else {
		fmt.Fprintf(stdout, "%s\n", res.Root)
		fmt.Fprintf(stderr, "done: %d files (%d distinct), %s received, %s already on disk\n", res.Files, res.Distinct,
			snapshot.HumanBytes(res.Fetched), snapshot.HumanBytes(res.Held))
	}
	return exitOK
}

// reportProgress prints the download's state every second until done.
func reportProgress(p *hfhub.Progress, done <-chan struct{}, stdout, stderr io.Writer, asJSON bool) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		s := p.Snapshot()
		if asJSON {
			json.NewEncoder(stdout).Encode(s)
			continue
		}
		line := fmt.Sprintf("%s of %s", snapshot.HumanBytes(s.Done), snapshot.HumanBytes(s.Total))
		if s.Rate > 0 {
			line += fmt.Sprintf(" · %s/s", snapshot.HumanBytes(int64(s.Rate)))
		}
		if s.ETA > 0 {
			line += " · about " + s.ETA.Round(time.Second).String() + " left"
		}
		if len(s.Active) > 0 {
			line += " · " + s.Active[0].Path
			if len(s.Active) > 1 {
				line += fmt.Sprintf(" and %d more", len(s.Active)-1)
			}
		}
		fmt.Fprintln(stderr, line)
	}
}

func modelVerify(env hfhub.Env, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("model verify", stderr)
	rev := fs.String("revision", "", "verify the HF cache's snapshot of this branch, tag or commit")
	online := fs.Bool("online", false, "check against the Hub's tree listing instead of the hashes recorded on disk")
	repair := fs.Bool("repair", false, "delete wrong files and download them (and missing ones) again from the same commit")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	// Flags may follow the folder.
	var dirs []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return exitInvalid
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if (len(dirs) == 1) == (*rev != "") || len(dirs) > 1 {
		fmt.Fprintln(stderr, "usage: h3studio model verify DIR|--revision REV [--online] [--repair] [--json]")
		return exitInvalid
	}
	root := ""
	if *rev != "" {
		root = hfhub.FindRevision(env, hfhub.Repo, *rev)
		if root == "" {
			fmt.Fprintf(stderr, "h3studio model verify: no snapshot of %s at %q in %s\n", hfhub.Repo, *rev, env.HubCache)
			return exitFailed
		}
	} else {
		root = dirs[0]
	}
	ctx, stop := interruptible()
	defer stop()
	var entries []hfhub.Entry
	if *online {
		client, src := hubClient(env)
		commit := *rev
		if commit == "" {
			if r, err := hfhub.Verify(ctx, root, []hfhub.Entry{}, 1); err == nil {
				commit = r.Commit
			}
		}
		if commit == "" {
			commit = "main"
		}
		all, err := client.Tree(ctx, hfhub.Repo, commit, "", true)
		if err != nil {
			return exitFor(stderr, "verify", err, src)
		}
		for _, e := range all {
			if _, err := os.Lstat(root + "/" + e.Path); err == nil {
				entries = append(entries, e)
			}
		}
	}
	rep, err := hfhub.Verify(ctx, root, entries, 4)
	if err != nil {
		return exitFor(stderr, "verify", err, "")
	}
	if *asJSON {
		printJSON(stdout, rep)
	} else {
		for _, b := range rep.Bad {
			fmt.Fprintf(stdout, "MISMATCH %s: %s is %s, expected %s\n", b.Path, b.Kind, b.Got, b.Want)
		}
		for _, m := range rep.Missing {
			fmt.Fprintf(stdout, "MISSING  %s\n", m)
		}
		for _, p := range rep.Problems {
			fmt.Fprintf(stdout, "ERROR    %s\n", p)
		}
		if len(rep.Unknown) > 0 {
			fmt.Fprintf(stdout, "%d files carry no recorded hash (use --online to check them against the Hub)\n", len(rep.Unknown))
		}
		fmt.Fprintf(stdout, "%s: %d files checked (%s hashed), %d wrong, %d missing\n", rep.Root, rep.Checked,
			snapshot.HumanBytes(rep.Bytes), len(rep.Bad), len(rep.Missing))
	}
	if !rep.OK() && *repair && len(rep.Problems) == 0 {
		client, src := hubClient(env)
		fmt.Fprintf(stderr, "repairing: %d wrong and %d missing files are downloaded again\n", len(rep.Bad), len(rep.Missing))
		if _, err := hfhub.Repair(ctx, client, rep, nil); err != nil {
			return exitFor(stderr, "verify --repair", err, src)
		}
		if rep, err = hfhub.Verify(ctx, root, entries, 4); err != nil {
			return exitFor(stderr, "verify", err, "")
		}
		fmt.Fprintf(stdout, "after repair: %d files checked, %d wrong, %d missing\n", rep.Checked, len(rep.Bad), len(rep.Missing))
		for _, b := range rep.Bad {
			fmt.Fprintf(stdout, "MISMATCH %s: %s is %s, expected %s\n", b.Path, b.Kind, b.Got, b.Want)
		}
	}
	if !rep.OK() {
		if len(rep.Bad) > 0 {
			fmt.Fprintf(stderr, "h3studio model verify: %d files have wrong bytes (first: %s); `h3studio model verify --repair` downloads them again\n", len(rep.Bad), rep.Bad[0].Path)
		}
		return exitFailed
	}
	if rep.Checked > 0 {
		hfhub.LoadRecords(hfhub.DefaultRecordsPath()).MarkVerified(rep.Root, rep.Commit)
	}
	return exitOK
}

func modelPath(env hfhub.Env, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("model path", stderr)
	rev := fs.String("revision", "", "the HF cache's snapshot of this branch, tag or commit")
	task := fs.String("task", "", "a task the snapshot must be able to run")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return exitInvalid
	}
	if *task != "" {
		if _, err := hfhub.ParseTasks(*task); err != nil {
			fmt.Fprintf(stderr, "h3studio model path: %v\n", err)
			return exitInvalid
		}
	}
	if *rev != "" {
		if p := hfhub.FindRevision(env, hfhub.Repo, *rev); p != "" {
			fmt.Fprintln(stdout, p)
			return exitOK
		}
		fmt.Fprintf(stderr, "h3studio model path: no snapshot of %s at %q in %s\n", hfhub.Repo, *rev, env.HubCache)
		return exitFailed
	}
	rec := hfhub.LoadRecords(hfhub.DefaultRecordsPath())
	for _, in := range hfhub.Discover(env, modelFolders(rec, nil), rec) {
		if !in.Complete() || in.Demo {
			continue
		}
		if *task != "" && !slices.Contains(in.Tasks, strings.ToLower(*task)) {
			continue
		}
		fmt.Fprintln(stdout, in.Path)
		return exitOK
	}
	fmt.Fprintln(stderr, "h3studio model path: no complete MiniMax-H3 snapshot found; run `h3studio model download`")
	return exitFailed
}

func modelToken(env hfhub.Env, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: h3studio model token set|delete|status")
		return exitInvalid
	}
	switch args[0] {
	case "set":
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 4096))
		if err != nil {
			fmt.Fprintf(stderr, "h3studio model token set: %v\n", err)
			return exitFailed
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
			fmt.Fprintf(stderr, "h3studio model token set: give one token on standard input (create one at %s)\n", hfhub.TokenPageURL)
			return exitInvalid
		}
		if err := credstore.Set(hfhub.TokenService, hfhub.TokenAccount, tok); err != nil {
			fmt.Fprintf(stderr, "h3studio model token set: %v\n", err)
			return exitFailed
		}
		fmt.Fprintln(stdout, "token stored")
		return exitOK
	case "delete":
		err := credstore.Delete(hfhub.TokenService, hfhub.TokenAccount)
		if err != nil && !errors.Is(err, credstore.ErrNotFound) {
			fmt.Fprintf(stderr, "h3studio model token delete: %v\n", err)
			return exitFailed
		}
		fmt.Fprintln(stdout, "token deleted")
		return exitOK
	case "status":
		_, src := env.Token(credstore.Default)
		if src == hfhub.NoToken {
			fmt.Fprintln(stdout, "no token: requests are anonymous")
		} else {
			fmt.Fprintf(stdout, "a token is set (from %s)\n", src)
		}
		return exitOK
	}
	fmt.Fprintln(stderr, "usage: h3studio model token set|delete|status")
	return exitInvalid
}
