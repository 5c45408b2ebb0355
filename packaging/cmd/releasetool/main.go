// Command releasetool does the parts of scripts/release.sh that need
// package packaging, so that archive names, archive bytes and the
// registry entry are written in one place, the same on every machine:
//
//	releasetool targets VERSION
//	    one line per target: GOOS GOARCH EXE ARCHIVE
//	releasetool archive OUT EPOCH EXE [FILE...]
//	    write the .tar.gz or .zip OUT: EXE (mode 0755) and the FILEs
//	    (0644) at its root, dated EPOCH (Unix seconds)
//	releasetool checksums OUT FILE...
//	    write sha256sum lines for the FILEs to OUT
//	releasetool checksums-name VERSION
//	    print the checksums file's name
//	releasetool agent-json VERSION
//	    print the ACP registry entry (packaging/registry/agent.json)
//	releasetool verify DIR VERSION
//	    check the release in DIR: its agent.json is the entry for
//	    VERSION, and the archives it points to are in DIR with the sums
//	    the checksums file lists (packaging.VerifyRelease)
//
// It exits 2 on a bad command line or version, 1 when a file cannot be
// read or written or a release does not verify.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dsh-acp/dsh-acp/packaging"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "releasetool:", err)
		if _, ok := err.(usageError); ok {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

func version(args []string) (string, error) {
	if len(args) != 2 {
		return "", usageError("usage: releasetool " + args[0] + " VERSION")
	}
	if err := packaging.ValidVersion(args[1]); err != nil {
		return "", usageError(err.Error())
	}
	return args[1], nil
}

func run(args []string) error {
	if len(args) == 0 {
		return usageError("usage: releasetool targets|archive|checksums|checksums-name|agent-json|verify ...")
	}
	switch args[0] {
	case "targets":
		v, err := version(args)
		if err != nil {
			return err
		}
		for _, t := range packaging.Targets {
			fmt.Println(t.GOOS, t.GOARCH, t.Exe(), t.ArchiveName(v)) // stdout-ok: the tool's output for release.sh
		}
	case "checksums-name":
		v, err := version(args)
		if err != nil {
			return err
		}
		fmt.Println(packaging.ChecksumsName(v)) // stdout-ok
	case "agent-json":
		v, err := version(args)
		if err != nil {
			return err
		}
		b, err := packaging.RegistryEntry(v)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(b) // stdout-ok
		return err
	case "verify":
		if len(args) != 3 {
			return usageError("usage: releasetool verify DIR VERSION")
		}
		if err := packaging.ValidVersion(args[2]); err != nil {
			return usageError(err.Error())
		}
		if err := packaging.VerifyRelease(args[1], args[2]); err != nil {
			return fmt.Errorf("the release in %s does not verify:\n%w", args[1], err)
		}
		fmt.Println("release", args[2], "in", args[1]+": agent.json, archives and checksums agree") // stdout-ok
	case "archive":
		if len(args) < 4 {
			return usageError("usage: releasetool archive OUT EPOCH EXE [FILE...]")
		}
		epoch, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return usageError("EPOCH must be Unix seconds, got " + strconv.Quote(args[2]))
		}
		var files []packaging.File
		for i, p := range args[3:] {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files = append(files, packaging.File{Name: filepath.Base(p), Data: data, Exec: i == 0})
		}
		return packaging.WriteArchive(args[1], files, time.Unix(epoch, 0))
	case "checksums":
		if len(args) < 3 {
			return usageError("usage: releasetool checksums OUT FILE...")
		}
		return packaging.WriteChecksums(args[1], args[2:])
	default:
		return usageError("unknown command " + strconv.Quote(args[0]))
	}
	return nil
}
