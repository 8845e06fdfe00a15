package vecfile

// WaitPartition waits for the build of x's partition in the background,
// if any, to return.
func WaitPartition(x *Index) { x.waitBuild() }

// SetBuildHook sets the function the builds of the partition call at
// each stage ("start"; "written": the body synced, the header not yet
// written) with their index's directory and the channel closed when they
// are asked to stop; nil removes it.
func SetBuildHook(h func(dir, stage string, stop <-chan struct{})) {
	if h == nil {
		ivfHook.Store(nil)
		return
	}
	ivfHook.Store(&h)
}

// SetInt8MinShare sets the share of the lists of int8 rows a search
// probes at least (ivf8MinShare) and returns the previous one.
func SetInt8MinShare(v float64) float64 {
	old := ivf8MinShare
	ivf8MinShare = v
	return old
}
