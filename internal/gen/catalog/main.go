// Command catalog generates package catalog (catalog/catalog_gen.go) and
// docs/retry-categories.md from the committed spec snapshot in
// spec/commands.json and the category rules in rules.go.
//
// Default mode (run by go generate in catalog/):
//
//	go run ../internal/gen/catalog
//
// The snapshot holds facts only (names, groups, one-line summaries, since
// versions, arities, flags, key positions, ACL categories). It is refreshed
// by hand, in this order, and then committed:
//
//  1. From a live Redis 7.0 server (COMMAND INFO and COMMAND DOCS over RESP2):
//
//     go run ./internal/gen/catalog -capture 127.0.0.1:16999
//
//  2. Commands newer than that server, from the src/commands/*.json
//     specifications in the Redis and Valkey repositories (a checkout, or
//     the individual files copied into one directory). Commands already in
//     the snapshot are kept; the first import that names a command wins:
//
//     go run ./internal/gen/catalog -import DIR -origin redis -source "redis/redis@COMMIT src/commands"
//     go run ./internal/gen/catalog -import DIR -origin valkey -source "valkey-io/valkey@COMMIT src/commands"
//
// For imported commands the generator derives what the server reports:
// COMMAND INFO's key range from the key specs, movablekeys, and the
// implicit ACL categories (write, read, admin, dangerous, pubsub, fast,
// slow, blocking). Sentinel-only commands are skipped.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("gen/catalog: ")
	var (
		specPath = flag.String("spec", "", "spec snapshot (default: spec/commands.json next to this generator)")
		outPath  = flag.String("out", "catalog_gen.go", "generated Go file")
		docPath  = flag.String("doc", "../docs/retry-categories.md", "generated category document")
		capture  = flag.String("capture", "", "refresh the snapshot from the live server at `addr` instead of generating")
		importD  = flag.String("import", "", "add commands from `dir`/*.json specifications instead of generating")
		origin   = flag.String("origin", "redis", "with -import: redis or valkey")
		source   = flag.String("source", "", "with -import: where the files came from")
	)
	flag.Parse()
	if *specPath == "" {
		*specPath = defaultSpecPath()
	}

	switch {
	case *capture != "" || *importD != "":
		s, err := loadSnapshot(*specPath)
		if os.IsNotExist(err) {
			s, err = &snapshot{}, nil
		}
		if err != nil {
			log.Fatal(err)
		}
		if *capture != "" {
			if err := captureLive(s, *capture); err != nil {
				log.Fatal(err)
			}
		} else {
			if *source == "" {
				log.Fatal("-import needs -source")
			}
			n, err := importJSONDir(s, *importD, *origin, *source)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Fprintf(os.Stderr, "imported %d commands\n", n)
		}
		if err := s.save(*specPath); err != nil {
			log.Fatal(err)
		}
	default:
		s, err := loadSnapshot(*specPath)
		if err != nil {
			log.Fatal(err)
		}
		cmds, err := build(s)
		if err != nil {
			log.Fatal(err)
		}
		code, err := renderGo(cmds)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(*outPath, code, 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(*docPath, renderDoc(cmds, s.Sources), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// defaultSpecPath finds spec/commands.json from the module root or from
// catalog/ (where go generate runs).
func defaultSpecPath() string {
	for _, p := range []string{
		"internal/gen/catalog/spec/commands.json",
		"../internal/gen/catalog/spec/commands.json",
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.FromSlash("internal/gen/catalog/spec/commands.json")
}
