//! The thread that owns a sender's llama.cpp context: renders each request with the chat
//! template, evaluates only what changed since the last one, samples, and streams the parsed
//! result back.

use crate::chat::Deltas;
use crate::stats::Stats;
use crate::template::{render, supports_tools};
use crate::wire::WireJob;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{AddBos, ChatTemplateResult, GrammarTriggerType, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use octo_agent::{ProviderError, StopReason, StreamEvent, Usage};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;

/// One request.
pub struct Job {
    /// What to answer.
    pub spec: WireJob,
    /// Where the events go; a closed channel cancels the request.
    pub events: UnboundedSender<Result<StreamEvent, ProviderError>>,
}

/// How a context is made and sampled.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Context size in tokens.
    pub n_ctx: u32,
    /// CPU threads.
    pub threads: usize,
    /// Sampling temperature (0: greedy).
    pub temperature: f32,
}

/// A running worker.
pub struct Worker {
    jobs: std::sync::mpsc::Sender<Job>,
}

impl Worker {
    /// Starts the thread and its context; an error when the context cannot be made.
    pub fn start(
        model: &'static LlamaModel,
        template: LlamaChatTemplate,
        settings: Settings,
        stats: Arc<Mutex<Stats>>,
    ) -> Result<Self, crate::LocalError> {
        let (jobs, rx) = std::sync::mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        std::thread::Builder::new()
            .name("octo-local-model".into())
            .spawn(move || {
                let mut state = match State::new(model, template, settings, stats) {
                    Ok(s) => {
                        let _ = ready_tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                for job in rx {
                    state.handle(job);
                }
            })
            .map_err(|e| crate::LocalError::Engine(format!("cannot start the model thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self { jobs }),
            Ok(Err(e)) => Err(crate::LocalError::Engine(e)),
            Err(_) => Err(crate::LocalError::Engine("the model thread stopped while starting".into())),
        }
    }

    /// Queues a request; the events arrive on its channel.
    pub fn submit(&self, job: Job) -> Result<(), ProviderError> {
        self.jobs
            .send(job)
            .map_err(|_| ProviderError::Transport { message: "the local model thread has stopped".into() })
    }
}

struct State {
    model: &'static LlamaModel,
    template: LlamaChatTemplate,
    ctx: LlamaContext<'static>,
    /// The tokens whose keys and values are in the context, in order.
    cached: Vec<LlamaToken>,
    settings: Settings,
    stats: Arc<Mutex<Stats>>,
    seed: u32,
    /// Whether the chat template renders tools itself (else the generic JSON scheme is used).
    native_tools: bool,
}

fn engine(message: impl Into<String>) -> ProviderError {
    ProviderError::Server { status: None, message: message.into() }
}

impl State {
    fn new(
        model: &'static LlamaModel,
        template: LlamaChatTemplate,
        settings: Settings,
        stats: Arc<Mutex<Stats>>,
    ) -> Result<Self, String> {
        let threads = i32::try_from(settings.threads.max(1)).unwrap_or(4);
        let params = LlamaContextParams::default()
            .with_n_ctx(std::num::NonZeroU32::new(settings.n_ctx))
            .with_n_batch(512)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let backend = crate::engine::backend().map_err(|e| e.to_string())?;
        let mut ctx = model
            .new_context(backend, params)
            .map_err(|e| format!("cannot make a context of {} tokens: {e}", settings.n_ctx))?;
        warm_up(&mut ctx, model);
        let native_tools = supports_tools(model, &template);
        Ok(Self { model, template, ctx, cached: Vec::new(), settings, stats, seed: 0x5eed, native_tools })
    }

    fn handle(&mut self, job: Job) {
        if let Err(e) = self.generate(&job) {
            let _ = job.events.send(Err(e));
        }
    }

    /// The prompt, its grammar and parser; `true` when the answer uses the generic JSON scheme.
    fn render(&self, job: &Job) -> Result<(ChatTemplateResult, bool), ProviderError> {
        if self.native_tools {
            let tools = job.spec.tools.as_ref().map(Value::to_string);
            return Ok((
                render(
                    self.model,
                    &self.template,
                    &job.spec.messages.to_string(),
                    tools.as_deref(),
                    &job.spec.tool_choice,
                    None,
                )?,
                false,
            ));
        }
        let history = crate::chat::generic::history(&job.spec.messages);
        let Some(tools) = &job.spec.tools else {
            return Ok((
                render(self.model, &self.template, &history.to_string(), None, &job.spec.tool_choice, None)?,
                false,
            ));
        };
        let required = job.spec.tool_choice == "required";
        let only = job.spec.only_tool.as_deref();
        let messages =
            crate::chat::generic::with_note(&history, &crate::chat::generic::note(tools, only, required));
        let schema = crate::chat::generic::schema(tools, only, required).to_string();
        Ok((
            render(
                self.model,
                &self.template,
                &messages.to_string(),
                None,
                &job.spec.tool_choice,
                Some(&schema),
            )?,
            true,
        ))
    }

    fn sampler(&self, rendered: &ChatTemplateResult) -> Result<LlamaSampler, ProviderError> {
        let mut chain = Vec::new();
        if let Some(g) = rendered.grammar.as_deref().filter(|g| !g.trim().is_empty()) {
            let grammar = if rendered.grammar_lazy {
                let mut patterns = Vec::new();
                let mut tokens = Vec::new();
                for t in &rendered.grammar_triggers {
                    match t.trigger_type {
                        GrammarTriggerType::Token => tokens.extend(t.token),
                        GrammarTriggerType::Word => patterns.push(regex_escape(&t.value)),
                        GrammarTriggerType::Pattern => patterns.push(t.value.clone()),
                        GrammarTriggerType::PatternFull => {
                            let v = &t.value;
                            let anchored = format!(
                                "{}{v}{}",
                                if v.starts_with('^') { "" } else { "^" },
                                if v.ends_with('$') { "" } else { "$" }
                            );
                            patterns.push(anchored);
                        }
                    }
                }
                LlamaSampler::grammar_lazy_patterns(self.model, g, "root", &patterns, &tokens)
            } else {
                LlamaSampler::grammar(self.model, g, "root")
            };
            chain.push(grammar.map_err(|e| engine(format!("the tool-call grammar was rejected: {e}")))?);
        }
        if self.settings.temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            chain.push(LlamaSampler::top_k(40));
            chain.push(LlamaSampler::top_p(0.95, 1));
            chain.push(LlamaSampler::min_p(0.05, 1));
            chain.push(LlamaSampler::temp(self.settings.temperature));
            chain.push(LlamaSampler::dist(self.seed));
        }
        Ok(LlamaSampler::chain_simple(chain))
    }

    /// Evaluates `tokens` from the first one that differs from what the context holds, telling
    /// `progress` how far it is after each batch of a long prompt; how many were reused.
    fn evaluate(
        &mut self,
        tokens: &[LlamaToken],
        batch: &mut LlamaBatch,
        progress: &dyn Fn(String),
    ) -> Result<usize, ProviderError> {
        let mut common = self.cached.iter().zip(tokens).take_while(|(a, b)| a == b).count();
        // The last prompt token is always evaluated again: its logits start the answer.
        if common == tokens.len() {
            common = common.saturating_sub(1);
        }
        if common < self.cached.len() {
            let p0 = u32::try_from(common).unwrap_or(u32::MAX);
            let removed = self.ctx.clear_kv_cache_seq(Some(0), Some(p0), None).unwrap_or(false);
            if !removed {
                // Some models (recurrent ones) cannot drop a suffix: start over.
                self.ctx.clear_kv_cache();
                common = 0;
            }
            self.cached.truncate(common);
        }
        let n_batch = usize::try_from(self.ctx.n_batch()).unwrap_or(512).max(1);
        let rest = &tokens[common..];
        for (i, chunk) in rest.chunks(n_batch).enumerate() {
            batch.clear();
            let last_chunk = (i + 1) * n_batch >= rest.len();
            for (j, t) in chunk.iter().enumerate() {
                let pos = i32::try_from(self.cached.len()).unwrap_or(i32::MAX);
                let logits = last_chunk && j + 1 == chunk.len();
                batch.add(*t, pos, &[0], logits).map_err(|e| engine(e.to_string()))?;
                self.cached.push(*t);
            }
            self.ctx.decode(batch).map_err(|e| engine(format!("evaluating the prompt failed: {e}")))?;
            if rest.len() > n_batch {
                let done = ((i + 1) * n_batch).min(rest.len());
                progress(format!("reading the prompt: {done} of {} tokens", rest.len()));
            }
        }
        Ok(common)
    }

    fn generate(&mut self, job: &Job) -> Result<(), ProviderError> {
        let started = Instant::now();
        let (rendered, generic) = self.render(job)?;
        let tokens = self.prompt_tokens(&rendered)?;
        let mut sampler = self.sampler(&rendered)?;
        // The grammar (and the parser) start before the generation prompt the template ends
        // with: it is already written, so it is fed to them first.
        let prefix = rendered.generation_prompt.clone();
        if !prefix.is_empty() && rendered.grammar.is_some() {
            if let Ok(tokens) = self.model.str_to_token(&prefix, AddBos::Never) {
                sampler.accept_many(&tokens);
            }
        }
        let mut batch = LlamaBatch::new(usize::try_from(self.ctx.n_batch()).unwrap_or(512).max(1), 1);
        let events = job.events.clone();
        let reused = self.evaluate(&tokens, &mut batch, &|m| {
            let _ = events.send(Ok(StreamEvent::Progress(m)));
        })?;
        let mut parser = rendered
            .streaming_state_oaicompat()
            .map_err(|e| engine(format!("the chat parser could not start: {e}")))?;
        if !prefix.is_empty() && !generic {
            // What the prefix itself parses to is not part of the answer.
            let _ = parser.update(&prefix, true);
        }
        let mut answer = Answer {
            job,
            generic,
            parser,
            deltas: Deltas::default(),
            text: String::new(),
            produced: 0,
            cut: None,
        };
        let mut first_token = None;
        let Some(stop) = self.sample(&mut answer, &mut sampler, &mut batch, &rendered, || {
            *first_token.get_or_insert_with(|| started.elapsed())
        })?
        else {
            return Ok(());
        };
        let stop = answer.finish(stop, &rendered.additional_stops)?;
        if let Some(note) = answer.cut.take() {
            answer.send(StreamEvent::TextDelta(note));
        }
        let evaluated = tokens.len() - reused;
        answer.send(StreamEvent::Usage(Usage {
            input_tokens: evaluated as u64,
            cache_read_tokens: reused as u64,
            output_tokens: u64::from(answer.produced),
            ..Usage::default()
        }));
        answer.send(StreamEvent::Stop(stop));
        *self.stats.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Stats {
            prompt_tokens: tokens.len(),
            evaluated_tokens: evaluated,
            reused_tokens: reused,
            generated_tokens: answer.produced as usize,
            time_to_first_token: first_token,
            total: started.elapsed(),
        };
        Ok(())
    }

    /// The rendered prompt as tokens; a prompt the context cannot hold is an error saying so.
    fn prompt_tokens(&self, rendered: &ChatTemplateResult) -> Result<Vec<LlamaToken>, ProviderError> {
        let tokens = self
            .model
            .str_to_token(&rendered.prompt, AddBos::Always)
            .map_err(|e| engine(format!("tokenizing the prompt failed: {e}")))?;
        let n_ctx = self.n_ctx();
        if tokens.len() + 1 >= n_ctx {
            return Err(ProviderError::ContextTooLong {
                deficit: Some((tokens.len() + 1 - n_ctx) as u64),
                message: format!("the prompt has {} tokens; the local context holds {n_ctx}", tokens.len()),
            });
        }
        Ok(tokens)
    }

    fn n_ctx(&self) -> usize {
        usize::try_from(self.settings.n_ctx).unwrap_or(usize::MAX)
    }

    /// Special tokens shown only when the template needs them as text (a tool-call marker);
    /// others (a stray turn marker) are not part of the answer.
    fn preserved(&self, rendered: &ChatTemplateResult) -> Vec<LlamaToken> {
        rendered
            .preserved_tokens
            .iter()
            .filter_map(|t| {
                self.model.str_to_token(t, AddBos::Never).ok().filter(|v| v.len() == 1).map(|v| v[0])
            })
            .collect()
    }

    /// Samples and decodes token after token until the model ends its turn, a stop sequence
    /// appears, or a limit is reached; `None` when nobody listens any more.
    fn sample(
        &mut self,
        answer: &mut Answer<'_>,
        sampler: &mut LlamaSampler,
        batch: &mut LlamaBatch,
        rendered: &ChatTemplateResult,
        mut first_token: impl FnMut() -> std::time::Duration,
    ) -> Result<Option<StopReason>, ProviderError> {
        let preserved = self.preserved(rendered);
        let mut decoder = encoding_rs::UTF_8.new_decoder();
        let mut last = batch.n_tokens() - 1;
        loop {
            if answer.job.events.is_closed() {
                return Ok(None);
            }
            if answer.produced >= answer.job.spec.max_tokens || self.cached.len() + 1 >= self.n_ctx() {
                return Ok(Some(StopReason::MaxTokens));
            }
            let token = sampler.sample(&self.ctx, last);
            if self.model.is_eog_token(token) {
                return Ok(Some(StopReason::EndTurn));
            }
            first_token();
            answer.produced += 1;
            let piece = self
                .model
                .token_to_piece(token, &mut decoder, preserved.contains(&token), None)
                .unwrap_or_default();
            match answer.push(&piece, &rendered.additional_stops)? {
                Pushed::Gone => return Ok(None),
                Pushed::Stop => return Ok(Some(StopReason::StopSequence)),
                Pushed::More => {}
            }
            if answer.produced.is_multiple_of(16) {
                let runaway = (answer.generic && answer.text.len() > MAX_CALL_BYTES)
                    .then(|| format!("a tool call grew past {} KB", MAX_CALL_BYTES / 1024));
                let capped = answer.job.spec.soft_cap.is_some_and(|cap| answer.produced >= cap).then(|| {
                    "that is as long as octo lets a model this small go on (set max_tokens for more)"
                        .to_owned()
                });
                let why = runaway.or_else(|| crate::degenerate::degenerate(&answer.text)).or(capped);
                if let Some(why) = why {
                    if !answer.generic && answer.job.spec.tools.is_none() {
                        // A plain answer (no tools offered) keeps what it said; its end says why
                        // it stops there.
                        answer.cut = Some(format!(
                            "\n\n[octo stopped the local model after {} tokens: {why}. A larger model answers better: octo models pull qwen2.5-coder-1.5b]",
                            answer.produced
                        ));
                        return Ok(Some(StopReason::EndTurn));
                    }
                    return Err(ProviderError::InvalidRequest {
                        status: None,
                        message: format!(
                            "the local model stopped making sense after {} tokens ({why}), so octo stopped it. A model this small may not manage this task with tools: try a larger one (octo models pull qwen2.5-coder-1.5b), or --no-tools",
                            answer.produced,
                        ),
                    });
                }
            }
            batch.clear();
            let pos = i32::try_from(self.cached.len()).unwrap_or(i32::MAX);
            batch.add(token, pos, &[0], true).map_err(|e| engine(e.to_string()))?;
            self.ctx.decode(batch).map_err(|e| engine(format!("generating failed: {e}")))?;
            self.cached.push(token);
            last = 0;
        }
    }
}

/// What [`Answer::push`] found.
enum Pushed {
    /// Go on.
    More,
    /// A stop sequence appeared.
    Stop,
    /// Nobody listens any more.
    Gone,
}

/// The answer as it is generated: its text, the parser that reads tool calls from it, and the
/// events sent.
struct Answer<'j> {
    job: &'j Job,
    /// The answer uses the generic JSON scheme (parsed once at the end).
    generic: bool,
    parser: llama_cpp_2::openai::ChatParseStateOaicompat,
    deltas: Deltas,
    text: String,
    produced: u32,
    /// Why octo stopped a plain answer that degenerated (said at its end).
    cut: Option<String>,
}

impl Answer<'_> {
    fn send(&self, ev: StreamEvent) -> bool {
        self.job.events.send(Ok(ev)).is_ok()
    }

    /// Adds a piece of text; what comes before a stop sequence is parsed and sent.
    fn push(&mut self, piece: &str, stops: &[String]) -> Result<Pushed, ProviderError> {
        let from = self.text.len();
        self.text.push_str(piece);
        let stop_at = stop_in(&self.text, from, stops);
        let fed = match stop_at {
            Some(at) if at <= from => "",
            Some(at) => &self.text[from..at],
            None => &self.text[from..],
        };
        if !fed.is_empty() && !self.generic {
            let parsed = self
                .parser
                .update(fed, true)
                .map_err(|e| engine(format!("parsing the answer failed: {e}")))?;
            for d in parsed {
                for ev in self.deltas.events(&d) {
                    if !self.send(ev) {
                        return Ok(Pushed::Gone);
                    }
                }
            }
        }
        Ok(if stop_at.is_some() { Pushed::Stop } else { Pushed::More })
    }

    /// The end: the rest of the answer parsed and sent, open blocks closed; the stop reason.
    fn finish(&mut self, stop: StopReason, stops: &[String]) -> Result<StopReason, ProviderError> {
        if self.generic {
            let answer = stop_trimmed(&self.text, stops);
            for ev in crate::chat::generic::events(answer, &mut self.deltas) {
                self.send(ev);
            }
        } else {
            let tail = self
                .parser
                .update("", false)
                .map_err(|e| engine(format!("the answer did not parse: {e}")))?;
            for d in tail {
                for ev in self.deltas.events(&d) {
                    self.send(ev);
                }
            }
        }
        let stop = if stop == StopReason::StopSequence { StopReason::EndTurn } else { stop };
        let (closes, stop) = self.deltas.finish(stop);
        for ev in closes {
            self.send(ev);
        }
        Ok(stop)
    }
}

/// One decode on the new context, then an empty cache again, as llama-server does when it
/// starts: the first one allocates and touches what every later one uses, so the first request
/// does not pay for it.
fn warm_up(ctx: &mut llama_cpp_2::context::LlamaContext<'_>, model: &LlamaModel) {
    let token = [model.token_bos(), model.token_eos()].into_iter().find(|t| t.0 >= 0);
    let mut batch = LlamaBatch::new(1, 1);
    if let Some(t) = token {
        if batch.add(t, 0, &[0], true).is_ok() {
            let _ = ctx.decode(&mut batch);
        }
    }
    ctx.clear_kv_cache();
}

/// The longest answer in the JSON tool-call scheme: beyond it a call's arguments are runaway.
const MAX_CALL_BYTES: usize = 32 * 1024;
/// Where the first stop sequence starts in `text`, looking only at what the piece from `from`
/// could have completed.
fn stop_in(text: &str, from: usize, stops: &[String]) -> Option<usize> {
    stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let mut start = from.saturating_sub(s.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            text[start..].find(s.as_str()).map(|p| start + p)
        })
        .min()
}

/// `text` up to the first stop string.
fn stop_trimmed<'a>(text: &'a str, stops: &[String]) -> &'a str {
    let cut = stops.iter().filter(|s| !s.is_empty()).filter_map(|s| text.find(s.as_str())).min();
    cut.map_or(text, |c| &text[..c])
}

/// A literal as a regular expression.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn regex_escape_quotes_metacharacters() {
        assert_eq!(super::regex_escape("<tool_call>"), "<tool_call>");
        assert_eq!(super::regex_escape("[TOOL_CALLS]"), "\\[TOOL_CALLS\\]");
        assert_eq!(super::regex_escape("a.b*"), "a\\.b\\*");
    }
}
