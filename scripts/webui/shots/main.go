// Command shots opens Temporal Web UI pages in a headless Chromium through
// the DevTools protocol (github.com/chromedp/chromedp), saves a PNG
// screenshot of each and checks that the page's text (the page and the
// documents of its iframes, where the Web UI renders Markdown) holds
// every expected string. Used by scripts/webui/run.sh.
//
//	shots -out DIR -chrome /usr/bin/chromium NAME=URL=WANT1|WANT2 ...
//
// A WANT of the form "click:TEXT" is no string to find but an action
// taken first, in order: click the first element whose own text holds
// TEXT (the newest "Timer Started" row of a descending Event History, to
// open its details with the whole summary).
//
// Exit code 1 when a page misses a string (each missing one is printed),
// 2 on bad arguments; the screenshots are saved either way.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// pageText is the text of the page and of its iframes' documents (the
// Markdown of current details is rendered in one); an iframe that cannot
// be read contributes its srcdoc markup.
const pageText = `(() => {
  const parts = [document.body.innerText];
  for (const f of document.querySelectorAll('iframe')) {
    try { parts.push(f.contentDocument.body.innerText); } catch (e) { parts.push(f.getAttribute('srcdoc') || ''); }
  }
  return parts.join('\n');
})()`

func main() {
	out := flag.String("out", ".", "directory for the PNG screenshots (NAME.png) and page texts (NAME.txt)")
	chrome := flag.String("chrome", "", "Chromium binary (default: found on PATH)")
	wait := flag.Duration("wait", 60*time.Second, "how long a page may take to show every expected string")
	width := flag.Int("width", 1400, "window width in pixels")
	height := flag.Int("height", 1800, "window height in pixels")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: shots [-out DIR] [-chrome PATH] NAME=URL=WANT1|WANT2 ...")
		os.Exit(2)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.NoSandbox, chromedp.WindowSize(*width, *height),
		chromedp.Flag("disable-dev-shm-usage", true))
	if *chrome != "" {
		opts = append(opts, chromedp.ExecPath(*chrome))
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// start the browser on bctx: the first Run allocates it on the context
	// it gets, and a page's timeout context would close it when cancelled
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintf(os.Stderr, "starting the browser: %v\n", err)
		os.Exit(1)
	}
	failed := 0
	for _, arg := range flag.Args() {
		parts := strings.SplitN(arg, "=", 3)
		if len(parts) != 3 {
			fmt.Fprintf(os.Stderr, "bad page %q: give NAME=URL=WANT1|WANT2\n", arg)
			os.Exit(2)
		}
		name, url, wants := parts[0], parts[1], strings.Split(parts[2], "|")
		missing, err := shoot(bctx, *out, name, url, wants, *wait)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			failed++
			continue
		}
		for _, m := range missing {
			fmt.Printf("FAIL %s: %q not on the page\n", name, m)
		}
		if len(missing) > 0 {
			failed++
			continue
		}
		fmt.Printf("ok   %s: %d strings on the page (%s)\n", name, len(wants)-strings.Count(parts[2], "click:"), filepath.Join(*out, name+".png"))
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// shoot loads url, waits (up to wait) until the page's text holds every
// string of wants, saves NAME.png (full page) and NAME.txt, and returns
// the strings still missing then. Errors: the browser's.
func shoot(ctx context.Context, dir, name, url string, wants []string, wait time.Duration) ([]string, error) {
	tctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		return nil, err
	}
	var finds []string
	for _, w := range wants {
		text, ok := strings.CutPrefix(w, "click:")
		if !ok {
			finds = append(finds, w)
			continue
		}
		sel := fmt.Sprintf("//*[contains(text(), %q)]", text)
		if err := chromedp.Do(tctx, chromedp.WaitVisible(sel), chromedp.Click(sel)); err != nil {
			return nil, fmt.Errorf("click on %q: %w", text, err)
		}
	}
	wants = finds
	var text string
	var missing []string
	for deadline := time.Now().Add(wait); ; {
		t, err := chromedp.Run(tctx, chromedp.Evaluate[string](pageText))
		if err != nil {
			return nil, err
		}
		text = t
		missing = missing[:0]
		for _, w := range wants {
			if !strings.Contains(text, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	time.Sleep(time.Second) // let the last render settle before the picture
	png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(text), 0o644); err != nil {
		return nil, err
	}
	return missing, nil
}
