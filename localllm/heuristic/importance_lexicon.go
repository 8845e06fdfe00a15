package heuristic

import "strings"

// lexClass is a set of word classes of the heuristic scorer's lexicon.
type lexClass uint32

const (
	lexStop       lexClass = 1 << iota // function word or light verb: not a content word
	lexPhatic                          // greeting, thanks, reaction, filler
	lexSelf                            // first-person subject: i, we
	lexPossessive                      // first-person possessive: my, our
	lexPronoun                         // any subject pronoun, for "like"
	lexState                           // identity or state verb after a first-person subject
	lexAdverb                          // adverb that may sit between a subject and its verb
	lexPreference                      // preference word, anywhere
	lexLike                            // like, likes: a preference after a subject pronoun
	lexConstraint                      // strong constraint: diet, health, deadline
	lexModal                           // weak constraint or habit: never, always, must
	lexPlan                            // decision, plan or goal word, anywhere
	lexIntent                          // will, going, want: a plan after a first-person subject
	lexEvent                           // event verb or event noun
	lexTime                            // weekday, relative time, season
	lexMonth                           // month name ("may", "march" only when capitalised)
	lexNumber                          // number word
	lexPeriod                          // week, year, ...: a time after last, next, this
	lexTimeRef                         // last, next, this, every, past
	lexAnaphor                         // it, that, this: the object of a reaction ("love it!")
	lexIdiom                           // wait, believe: "can't wait" is no constraint
)

// The word lists of the lexicon, one class each. A word may sit in several.
// They are general English, chosen from the rubric of the HMO paper's
// Appendix A (identity and preferences, constraints and decisions,
// long-lived goals and milestones score high; greetings and filler low),
// not from any benchmark's answers.
var lexicon = map[lexClass]string{
	lexStop: `a an the and or but if then so because as of at by for with about
		against to from in on up down out over under into onto off through
		between after before during just also too very really much more most
		less least some any all both each every few many no nor not only own
		same such than that this these those there here it its i me my mine
		myself we us our ours ourselves you your yours yourself he him his
		himself she her hers herself they them their theirs themselves what
		which who whom whose when where why how am is are was were be been
		being have has had having do does did doing done will would shall
		should can could may might must get gets got getting go goes going
		gone make makes making let lets know knew known think thought feel
		feels felt mean means say says said see sees seen look looks want
		wants like likes thing things stuff something anything everything
		nothing someone anyone everyone somebody anybody everybody lot lots
		kind sort bit way ways even still already ever again well now yet
		though although while since until actually maybe perhaps pretty
		quite one ones other others another always never often sometimes
		usually else instead almost enough rather whether either neither
		such via per upon within without yeah yes ok okay oh`,
	lexPhatic: `hi hello hey hiya howdy bye goodbye cheers thanks thank thx ty
		appreciate appreciated welcome congrats congratulations sorry please
		wow whoa woah oh ooh ah aw aww yay haha hahaha hehe lol lmao omg gosh
		hmm um uh er great awesome amazing cool nice lovely wonderful
		fantastic incredible beautiful sweet cute fun funny interesting
		impressive brilliant excellent perfect neat good glad happy sad
		excited proud thrilled grateful thankful true right agreed agree
		exactly absolutely definitely totally sure yep yup nope alright
		luck inspiring stunning gorgeous touching heartwarming
		admirable super`,
	lexSelf:       `i we`,
	lexPossessive: `my our`,
	lexPronoun:    `i we you they he she`,
	lexState: `am was have had has work worked works live lived lives study
		studied studying grew own owned come born teach taught volunteer
		belong speak spoke graduated retired`,
	lexAdverb: `also still just really actually now currently recently finally
		always never usually often sometimes already definitely totally
		not do did`,
	lexPreference: `love loves loved adore adores enjoy enjoys enjoyed prefer
		prefers preferred favorite favourite favorites favourites hate hates
		hated dislike dislikes passion passionate fan fond obsessed hobby
		hobbies interested`,
	lexLike: `like likes liked`,
	lexConstraint: `allergic allergy allergies intolerant intolerance vegan
		vegetarian diabetic kosher halal gluten sober deadline deadlines
		required requirement mandatory forbidden`,
	lexModal: `never always must cannot avoid avoids strict rule rules limit
		need needs`,
	lexPlan: `decided decide decides decision plan plans planning planned goal
		goals dream dreams aim aiming intend intends intention resolution
		hoping signed enrolled registered booked scheduled applied applying
		committed promise promised career future someday eventually`,
	lexIntent: `will going gonna want wanna hope`,
	lexEvent: `went visited started began begun finished completed bought
		adopted joined moved graduated married engaged won lost took
		attended met traveled travelled celebrated received painted ran
		wrote built learned learnt tried found gave created launched
		released opened quit hired promoted retired broke injured passed
		volunteered hosted organized organised performed played cooked
		baked drove flew camped hiked climbed swam donated raised sold
		published became returned spent birthday wedding funeral party
		concert festival vacation holiday trip conference interview exam
		graduation surgery accident anniversary competition tournament race
		marathon class course workshop meeting ceremony recital exhibition
		camp camping hike`,
	lexTime: `monday tuesday wednesday thursday friday saturday sunday
		yesterday tomorrow tonight ago weekend weekends annual annually
		daily weekly monthly yearly summer winter spring autumn`,
	lexMonth: `january february march april may june july august september
		october november december jan feb mar apr jun jul aug sep sept oct
		nov dec`,
	lexNumber: `two three four five six seven eight nine ten eleven twelve
		twenty thirty forty fifty hundred thousand million dozen`,
	lexPeriod:  `week weeks weekend month months year years summer winter spring fall autumn night morning`,
	lexTimeRef: `last next this every past coming`,
	lexAnaphor: `it that this those these them`,
	lexIdiom:   `wait believe imagine`,
}

// lexClasses maps a lowercase word to its classes.
var lexClasses = buildLexicon()

func buildLexicon() map[string]lexClass {
	m := make(map[string]lexClass, 1024)
	for class, words := range lexicon {
		for _, w := range strings.Fields(words) {
			m[w] |= class
		}
	}
	return m
}

// ambiguousMonths are month names that are also common words: they name a
// month only when capitalised and not first in a sentence, or next to a
// number.
var ambiguousMonths = map[string]bool{"may": true, "march": true, "mar": true, "jan": true, "sept": true, "dec": true}
