package longmemeval_test

import (
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/longmemeval"
)

func Example() {
	const data = `[{
	  "question_id": "e47becba", "question_type": "single-session-user",
	  "question": "What degree did I graduate with?", "answer": "Business Administration",
	  "question_date": "2023/05/30 (Tue) 23:40",
	  "haystack_session_ids": ["sharegpt_yhr2fJd_0", "answer_280352e9"],
	  "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 10:05"],
	  "haystack_sessions": [
	    [{"role": "user", "content": "A quick vegetable curry?"}, {"role": "assistant", "content": "Onion, curry paste, chickpeas."}],
	    [{"role": "user", "content": "I graduated in Business Administration.", "has_answer": true}]
	  ],
	  "answer_session_ids": ["answer_280352e9"]
	}]`
	qs, err := longmemeval.Read(strings.NewReader(data))
	if err != nil {
		fmt.Println(err)
		return
	}
	q := qs[0]
	fmt.Println(q.ID, q.Type, q.Date.Format("2006-01-02 15:04"))
	for _, s := range q.Inputs() {
		for _, in := range s.Inputs {
			fmt.Printf("%s %s %s: %s\n", in.Time.Format("01-02 15:04:05"), in.Sources[0], in.Role, in.Text)
		}
	}
	fmt.Println("answer sessions", q.AnswerSessions, "evidence turns", q.EvidenceTurns())
	// Output:
	// e47becba single-session-user 2023-05-30 23:40
	// 05-20 02:21:00 sharegpt_yhr2fJd_0_1 user: A quick vegetable curry?
	// 05-20 02:21:30 sharegpt_yhr2fJd_0_2 assistant: Onion, curry paste, chickpeas.
	// 05-22 10:05:00 answer_280352e9_1 user: I graduated in Business Administration.
	// answer sessions [answer_280352e9] evidence turns [answer_280352e9_1]
}
