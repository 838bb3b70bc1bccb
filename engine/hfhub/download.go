package hfhub

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"h3studio/engine/snapshot"
)

// Request is what to download.
type Request struct {
	Repo     string          // default Repo
	Revision string          // a branch, tag or commit; default "main"
	Tasks    []snapshot.Task // default DefaultTasks
	// Dir, when set, is a plain folder to write (like `hf download --local-dir`);
	// otherwise the files go to HubCache in the HF cache layout.
	Dir      string
	HubCache string
	// Parallel is how many files download at once (default 3).
	Parallel int
	// Progress, when set, is updated as bytes arrive.
	Progress *Progress
	// FreeSpace reports the bytes free on the volume holding path (default: the file system's answer).
	FreeSpace func(path string) (int64, error)
}

// Result describes a finished download.
type Result struct {
	Root       string `json:"root"`   // the snapshot folder or --dir
	Commit     string `json:"commit"` // the commit downloaded
	Files      int    `json:"files"`
	Distinct   int    `json:"distinct"`   // distinct contents among Files
	Fetched    int64  `json:"fetched"`    // bytes received in this run
	Held       int64  `json:"held"`       // bytes of contents already on disk
	Refetched  int    `json:"refetched"`  // contents fetched again after a failed verification
	TotalBytes int64  `json:"totalBytes"` // bytes of the distinct contents
}

// ErrNoSpace is returned (wrapped) when the volume cannot hold what is still to download.
var ErrNoSpace = errors.New("not enough free space")

// ErrVerify is returned (wrapped) when a file's bytes do not match the Hub's hash twice.
var ErrVerify = errors.New("verification failed")

// Plan is a download worked out from the tree listing, before any byte moves.
type Plan struct {
	Commit   string
	Files    []Entry
	contents []*content
	// Total is the bytes of the distinct contents; Held of those on disk;
	// Partial of the bytes already in partial files; Need = Total-Held-Partial.
	Total, Held, Partial, Need int64
	st                         store
	repo                       string
}

// PlanDownload asks the Hub for the revision and its tree and works out
// which contents are needed, held, partially held.
func PlanDownload(ctx context.Context, c *Client, req *Request) (*Plan, error) {
	req.defaults()
	info, err := c.Revision(ctx, req.Repo, req.Revision)
	if err != nil {
		return nil, err
	}
	entries, err := c.Tree(ctx, req.Repo, info.SHA, "", true)
	if err != nil {
		return nil, err
	}
	files, err := Select(entries, req.Tasks)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", req.Repo, info.SHA, err)
	}
	p := &Plan{Commit: info.SHA, Files: files, repo: req.Repo}
	if req.Dir != "" {
		abs, err := filepath.Abs(req.Dir)
		if err != nil {
			return nil, err
		}
		p.st = &dirStore{dir: abs, commit: info.SHA}
	} else {
		p.st = newCacheStore(req.HubCache, req.Repo, info.SHA, req.Revision)
	}
	byEtag := map[string]*content{}
	for _, e := range files {
		k := e.Etag()
		ct := byEtag[k]
		if ct == nil {
			ct = &content{Etag: k, Size: e.Size, LFS: e.LFS != nil}
			byEtag[k] = ct
			p.contents = append(p.contents, ct)
		}
		ct.Paths = append(ct.Paths, e.Path)
	}
	// Small files first (configs are read early), then the big ones.
	sort.SliceStable(p.contents, func(i, j int) bool { return p.contents[i].Size < p.contents[j].Size })
	for _, ct := range p.contents {
		p.Total += ct.Size
		if p.st.held(ct) != "" {
			p.Held += ct.Size
			continue
		}
		if st, err := os.Stat(p.st.partial(ct)); err == nil && st.Size() <= ct.Size {
			p.Partial += st.Size()
		}
	}
	p.Need = p.Total - p.Held - p.Partial
	return p, nil
}

func (r *Request) defaults() {
	if r.Repo == "" {
		r.Repo = Repo
	}
	if r.Revision == "" {
		r.Revision = "main"
	}
	if len(r.Tasks) == 0 {
		r.Tasks = DefaultTasks
	}
	if r.Parallel <= 0 {
		r.Parallel = 3
	}
	if r.FreeSpace == nil {
		r.FreeSpace = FreeSpace
	}
	if r.Progress == nil {
		r.Progress = &Progress{}
	}
}

// Root is the folder the download fills.
func (p *Plan) Root() string { return p.st.root() }

// Download plans and runs req: every needed content not on disk is fetched
// (resuming its partial), verified while it streams, and only then published.
func Download(ctx context.Context, c *Client, req *Request) (*Result, error) {
	p, err := PlanDownload(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, c, req)
}

// Run fetches what the plan still needs.
func (p *Plan) Run(ctx context.Context, c *Client, req *Request) (*Result, error) {
	req.defaults()
	res := &Result{Root: p.st.root(), Commit: p.Commit, Files: len(p.Files), Distinct: len(p.contents), Held: p.Held, TotalBytes: p.Total}
	if p.Need > 0 {
		probe := filepath.Dir(p.st.partial(p.contents[0]))
		free, err := req.FreeSpace(probe)
		if err == nil && free < p.Need {
			return nil, fmt.Errorf("%w on %s: the download needs %s more, %s is free", ErrNoSpace, existingAncestor(probe),
				snapshot.HumanBytes(p.Need), snapshot.HumanBytes(free))
		}
	}
	req.Progress.start(p.Total, p.Held)
	work := make(chan *content)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := 0; i < req.Parallel; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ct := range work {
				fetched, refetched, err := p.get(ctx, c, req, ct)
				mu.Lock()
				res.Fetched += fetched
				res.Refetched += refetched
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	for _, ct := range p.contents {
		select {
		case work <- ct:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := p.st.finish(); err != nil {
		return res, fmt.Errorf("record the download in %s: %w", p.st.root(), err)
	}
	return res, nil
}

// get makes ct's paths hold its verified bytes, fetching them when not held.
func (p *Plan) get(ctx context.Context, c *Client, req *Request, ct *content) (fetched int64, refetched int, err error) {
	if src := p.st.held(ct); src != "" {
		if err := p.st.place(ct, src); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", ct.Paths[0], err)
		}
		return 0, 0, nil
	}
	partial := p.st.partial(ct)
	for try := 0; ; try++ {
		n, err := p.fetch(ctx, c, req, ct, partial)
		fetched += n
		if errors.Is(err, ErrVerify) && try == 0 {
			refetched++
			continue // a byte went wrong on the way: once more from the start
		}
		if err != nil {
			return fetched, refetched, err
		}
		break
	}
	src, err := p.st.publish(ct, partial)
	if err == nil {
		err = p.st.place(ct, src)
	}
	if err != nil {
		return fetched, refetched, fmt.Errorf("%s: publish: %w", ct.Paths[0], err)
	}
	req.Progress.fileDone(ct.Paths[0])
	return fetched, refetched, nil
}

// fetch completes the partial file of ct and verifies it; on a mismatch the
// partial is removed and ErrVerify returned.
func (p *Plan) fetch(ctx context.Context, c *Client, req *Request, ct *content, partial string) (int64, error) {
	name := ct.Paths[0]
	if err := os.MkdirAll(filepath.Dir(partial), 0o755); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	f, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return 0, fmt.Errorf("%s: %s is being downloaded by another process: %w", name, partial, err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	have := st.Size()
	if have > ct.Size {
		have = 0
	}
	// Resume: the bytes already on disk go through the hash first.
	h := newHash(ct.LFS, ct.Size)
	if have > 0 {
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, have)); err != nil {
			return 0, fmt.Errorf("%s: read the partial file: %w", name, err)
		}
	}
	if have != st.Size() {
		if err := f.Truncate(have); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	req.Progress.fileStart(name, ct.Size, have)
	var fetched int64
	fails := 0
	for have < ct.Size {
		n, restart, err := p.stream(ctx, c, ct, f, &h, have, req.Progress)
		fetched += n
		if restart {
			have = 0
		}
		have += n
		if err == nil {
			continue
		}
		if errors.Is(err, errTooLong) || !transient(err) || ctx.Err() != nil {
			if ctx.Err() != nil {
				return fetched, ctx.Err()
			}
			return fetched, fmt.Errorf("%s: %w", name, err)
		}
		if n > 0 {
			fails = 0
		}
		fails++
		if fails >= c.Attempts {
			return fetched, fmt.Errorf("%s: giving up after %d attempts: %w", name, fails, err)
		}
		if werr := c.wait(ctx, fails, err); werr != nil {
			return fetched, werr
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != ct.Etag {
		f.Close()
		os.Remove(partial)
		req.Progress.add(name, -ct.Size)
		return fetched, fmt.Errorf("%s: %w: %s of the downloaded bytes is %s, the Hub says %s", name, ErrVerify, hashKind(ct.LFS), got, ct.Etag)
	}
	if err := f.Sync(); err != nil {
		return fetched, fmt.Errorf("%s: %w", name, err)
	}
	return fetched, nil
}

var (
	errIdle    = errors.New("the connection delivered nothing for too long")
	errShort   = errors.New("the connection ended before the file did")
	errTooLong = errors.New("the server sent more bytes than the file has")
)

// stream appends the bytes from offset have to f (and h) until the file is
// complete or the connection fails. restart reports that the server
// ignored the Range and f was emptied to take the file from byte 0.
func (p *Plan) stream(ctx context.Context, c *Client, ct *content, f *os.File, hp *hash.Hash, have int64, prog *Progress) (n int64, restart bool, err error) {
	name := ct.Paths[0]
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s, err := c.Open(sctx, p.repo, p.Commit, name, have)
	if err != nil {
		return 0, false, err
	}
	defer s.Close()
	if s.Start != have {
		// The server sent the whole file for a ranged request: start over.
		if err := f.Truncate(0); err != nil {
			return 0, false, err
		}
		*hp = newHash(ct.LFS, ct.Size)
		prog.add(name, -have)
		restart = true
	}
	h := *hp
	if _, err := f.Seek(s.Start, io.SeekStart); err != nil {
		return 0, restart, err
	}
	idle := time.AfterFunc(c.IdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	buf := make([]byte, 1<<20)
	pos := s.Start
	for pos < ct.Size {
		k, rerr := s.Read(buf)
		if k > 0 {
			idle.Reset(c.IdleTimeout)
			if pos+int64(k) > ct.Size {
				return n, restart, errTooLong
			}
			if _, werr := f.Write(buf[:k]); werr != nil {
				return n, restart, fmt.Errorf("write %s: %w", f.Name(), werr)
			}
			h.Write(buf[:k])
			pos += int64(k)
			n += int64(k)
			prog.add(name, int64(k))
		}
		if rerr == io.EOF {
			if pos < ct.Size {
				return n, restart, errShort
			}
			break
		}
		if rerr != nil {
			if cause := context.Cause(sctx); cause == errIdle {
				return n, restart, errIdle
			}
			return n, restart, rerr
		}
	}
	return n, restart, nil
}

// DiscardPartials deletes the partial files of the plan's contents (a cancelled download).
func (p *Plan) DiscardPartials() {
	for _, ct := range p.contents {
		os.Remove(p.st.partial(ct))
	}
}
