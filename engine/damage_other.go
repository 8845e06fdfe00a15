//go:build !unix

package engine

import "os"

func unlockFile(*os.File) {}

func fileOwner(os.FileInfo) (int, bool) { return 0, false }
