package ollama

// Prompts of the language-model steps. The importance prompt is the
// "Initial Importance Scoring Evaluator" of the HMO paper (Appendix A,
// Table 6), asking for JSON instead of a bare integer so that the answer
// can be validated.

const importanceSystem = `You are an expert Cognitive Memory Engine. Your task is to evaluate a new interaction record between a User and an AI Agent to determine its "Initial Importance" (I0) for long-term retention.

Scoring Dimensions
1. Behavioral Alignment & Identity Mapping: Evaluate if the record captures distinctive user traits, specialized preferences, or recurring behavioral patterns. Higher scores are assigned to information that defines "who the user is" (e.g., specific aesthetic tastes, dietary restrictions, or professional paradigms) rather than generic interactions.
2. Reasoning Utility & Logical Dependency: Assess if the memory serves as a foundational "ground truth" for future task execution. This includes explicit user constraints, finalized decisions, or milestone-related facts that, if forgotten, would lead to logical inconsistency or repetitive prompting in downstream reasoning.
3. Contextual Persistence & Goal Projection: Determine the memory's lifespan and its relevance to long-term objectives. Prioritize records that link the current session to ongoing projects, multi-step workflows, or latent intents that are likely to resurface in future contexts beyond the immediate dialogue window.

Scoring Rubric (I0)
9-10 (Pivotal): Core identity facts, critical user constraints, or major life/project milestones. Essential for persona alignment.
7-8 (High Utility): Specific preferences, recurring habits, or detailed technical decisions that directly influence future interactions.
4-6 (Informative): Useful context but not critical. Standard information that might be relevant but isn't a "behavioral trait."
1-3 (Transient): Generic greetings, filler talk, or repetitive common knowledge that provides no unique insight into the user.

Output Format
Answer with JSON only: {"score": N} where N is an integer between 1 and 10. Do not provide any explanation.`

const importanceUser = "User Persona (P): %s\n\nInteraction Record (m): %s"

var importanceSchema = []byte(`{"type":"object","properties":{"score":{"type":"integer","minimum":1,"maximum":10}},"required":["score"]}`)

const compressSystem = `You compress a memory record for an AI agent's long-term memory. Choose the representation that keeps what matters:
- "semantic": facts or knowledge (documentation, code, explanations): state what it is and its key facts.
- "episodic": an event or exchange: who did what, when, with which outcome.
- "core": a lasting trait, preference or constraint of the user: state it plainly.
Keep names, numbers, dates and identifiers exactly. Write at most %d characters, much shorter than the record.
Answer with JSON only: {"kind": "semantic" | "episodic" | "core", "summary": "..."}.`

var compressSchema = []byte(`{"type":"object","properties":{"kind":{"type":"string","enum":["semantic","episodic","core"]},"summary":{"type":"string"}},"required":["kind","summary"]}`)

const profileSystem = `You maintain the persona profile of a user for an AI agent's memory: a short description of who the user is, their lasting preferences, constraints, projects and relationships, written in the third person from the salient terms and statements you are given. Do not invent facts. Write at most %d characters.
Answer with JSON only: {"profile": "..."}.`

var profileSchema = []byte(`{"type":"object","properties":{"profile":{"type":"string"}},"required":["profile"]}`)

// TriggerToken is what the sufficiency self-reflection answers when the
// retrieved context cannot answer the query (HMO section 3.2): the walk
// goes on to the next tier.
const TriggerToken = "[RETRIEVE]"

// answerToken is the self-reflection's answer when the context suffices.
const answerToken = "[ANSWER]"

const sufficiencySystem = `You decide whether retrieved memories are enough to answer a question. Read the question and the memories. If the memories contain the information needed to answer the question, answer "[ANSWER]". If they do not, answer "[RETRIEVE]" to search deeper memory tiers.
Answer with JSON only: {"decision": "[ANSWER]" | "[RETRIEVE]"}.`

const sufficiencyUser = "Question: %s\n\nMemories:\n%s"

var sufficiencySchema = []byte(`{"type":"object","properties":{"decision":{"type":"string","enum":["[ANSWER]","[RETRIEVE]"]}},"required":["decision"]}`)
