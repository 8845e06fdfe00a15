// Package crashloop holds hmo's crash loop: SIGKILLs at random moments
// of each write path (hmo import, the daemon's HTTP add, hmo add), each
// write retried until it succeeds, then a count of what was lost,
// duplicated or left unopenable. Run it with "make crash-loop" (it is
// skipped unless $HMO_CRASHLOOP gives the kills per path).
package crashloop
