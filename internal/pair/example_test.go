package pair_test

import (
	"fmt"
	"sync/atomic"

	"github.com/hmo-dev/hmo/internal/pair"
)

func ExampleRun() {
	squares := make([]int, 10)
	var next atomic.Int64
	pair.Run(func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(squares) {
				return
			}
			squares[i] = i * i
		}
	})
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}
