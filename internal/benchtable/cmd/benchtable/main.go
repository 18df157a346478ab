// Command benchtable writes Surety's benchmark table (bench/RESULTS.md) from one `make bench`
// run: the output of `go test -bench` and the gas snapshot `forge snapshot` wrote. It prints
// the table too, and exits 1 with a one-line message when a figure or a reference is
// missing, so the table never goes stale silently.
//
//	go run ./internal/benchtable/cmd/benchtable -go bench/go.txt -gas bench/gas.txt -out bench/RESULTS.md
//
// With -large it writes the table of the large run instead (benchtable.SuretyLarge: search
// over 1M cards), which has no gas figures.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/surety-ioa/surety/internal/benchtable"
)

func main() {
	goOut := flag.String("go", "bench/go.txt", "output of go test -bench")
	gasOut := flag.String("gas", "bench/gas.txt", "gas snapshot written by forge snapshot --snap")
	out := flag.String("out", "bench/RESULTS.md", "markdown file to write (the table also goes to stdout)")
	commit := flag.String("commit", "unknown", "the commit benchmarked (git describe)")
	large := flag.Bool("large", false, "the large run's table (benchtable.SuretyLarge), without gas")
	flag.Parse()
	if err := run(*goOut, *gasOut, *out, *commit, *large); err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "benchtable: ") { // benchtable's own errors name it already
			msg = "benchtable: " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}

func run(goOut, gasOut, out, commit string, large bool) error {
	f, err := os.Open(goOut)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := benchtable.ParseGoBench(f)
	if err != nil {
		return fmt.Errorf("%s: %w", goOut, err)
	}
	spec := benchtable.Surety()
	var gas []benchtable.Result
	if large {
		spec = benchtable.SuretyLarge()
	} else {
		g, err := os.Open(gasOut)
		if err != nil {
			return err
		}
		defer g.Close()
		if gas, err = benchtable.ParseGasSnapshot(g); err != nil {
			return fmt.Errorf("%s: %w", gasOut, err)
		}
	}
	t, err := benchtable.Build(spec, r, gas)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	meta := benchtable.Meta{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Commit: commit, GoVersion: runtime.Version()}
	if err := t.Markdown(&b, meta); err != nil {
		return err
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return err
	}
	_, err = os.Stdout.Write(b.Bytes())
	return err
}
