package locomo_test

import (
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/locomo"
)

func Example() {
	const data = `[{
	  "sample_id": "conv-1",
	  "conversation": {
	    "speaker_a": "Ann", "speaker_b": "Bob",
	    "session_1_date_time": "1:56 pm on 8 May, 2023",
	    "session_1": [
	      {"speaker": "Ann", "dia_id": "D1:1", "text": "My iguana is called Ziggy."},
	      {"speaker": "Bob", "dia_id": "D1:2", "text": "Look at my bike!", "blip_caption": "a photo of a red bike"}
	    ]
	  },
	  "qa": [{"question": "What is Ann's iguana called?", "answer": "Ziggy", "evidence": ["D1:1; D7:3"], "category": 4}]
	}]`
	convs, err := locomo.Read(strings.NewReader(data))
	if err != nil {
		fmt.Println(err)
		return
	}
	c := convs[0]
	s := c.Sessions[0]
	fmt.Println(c.ID, s.N, s.Time.Format("2006-01-02 15:04"))
	for _, t := range s.Turns {
		fmt.Printf("%s %s: %s\n", t.ID, t.Speaker, t.Text)
	}
	q := c.QA[0]
	fmt.Println(locomo.CategoryName(q.Category), q.Evidence)
	// Output:
	// conv-1 1 2023-05-08 13:56
	// D1:1 Ann: My iguana is called Ziggy.
	// D1:2 Bob: Look at my bike! [shares a photo of a red bike]
	// single-hop [D1:1]
}
