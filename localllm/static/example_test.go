package static_test

import (
	"context"
	"fmt"
	"log"

	"github.com/hmo-dev/hmo/localllm/static"
)

func ExampleStatic() {
	emb, err := static.New(nil) // nil: the embedded table and default options
	if err != nil {
		log.Fatal(err)
	}
	// The engine passes the text of every stored record to Observe, so that
	// words frequent in this store weigh less.
	memories := []string{
		"We camped at the beach last weekend and watched the stars.",
		"My sister started a new job at the bank.",
		"I signed up for a pottery class on Saturdays.",
	}
	emb.Observe(memories)
	docs, err := emb.Embed(context.Background(), memories)
	if err != nil {
		log.Fatal(err)
	}
	q, err := emb.Embed(context.Background(), []string{"Where did they go camping?"})
	if err != nil {
		log.Fatal(err)
	}
	best, bestScore := 0, float32(-2)
	for i, d := range docs {
		var score float32 // cosine: the vectors have unit length
		for j := range d {
			score += q[0][j] * d[j]
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	fmt.Println(emb.Dims())
	fmt.Println(memories[best])
	// Output:
	// 100
	// We camped at the beach last weekend and watched the stars.
}
