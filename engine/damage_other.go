//go:build !unix

package engine

import "os"

func unlockFile(*os.File) {}
