//! A server asking the user mid-call (form elicitation): through the calling turn's front end
//! (one question, then a question per field, the default kept for an empty answer), through the
//! hub's elicitor, or declined with a notice when nobody can answer.

#![allow(clippy::unwrap_used)] // test helpers: fail loudly

use super::client::{call, hub, stdio};
use futures_util::StreamExt;
use octo_agent::{Agent, AgentEvent, Message, ToolRegistry, ToolSource};
use octo_testkit::sender::{text, tools, ScriptedSender};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_question_reaches_the_user_through_the_calls_front_end() {
    let (hub, source) = hub(vec![stdio("t", &[])]).await;
    let mut registry = ToolRegistry::new();
    for t in source.tools() {
        registry.register(t);
    }
    let sender = ScriptedSender::new(vec![tools(&[("c1", "mcp__t__ask", "{}")]), text("done")]);
    let mut agent = Agent::builder(sender.clone()).tools(registry).build();
    let broker = agent.approvals();
    let mut questions = Vec::new();
    let mut result = String::new();
    {
        let mut stream = agent.turn_stream(Message::user("who am I?"), CancellationToken::new());
        while let Some(ev) = stream.next().await {
            match &ev {
                AgentEvent::QuestionAsked { question_id, question, options, .. } => {
                    questions.push((question.clone(), options.clone()));
                    let a = if options.iter().any(|o| o == "answer") {
                        "answer"
                    } else if question.starts_with("Name") {
                        "Ada"
                    } else {
                        ""
                    };
                    broker.answer(question_id, a).unwrap();
                }
                AgentEvent::ToolCallEnd { output, .. } => result = output.clone(),
                _ => {}
            }
        }
    }
    assert!(questions[0].0.contains("The MCP server `t` asks: Who are you?"), "{questions:?}");
    assert_eq!(questions.len(), 3, "the opening question and one per field: {questions:?}");
    assert!(result.contains("\"accept\""), "{result}");
    assert!(result.contains("\"Ada\"") && result.contains("30"), "the answer and the kept default: {result}");
    hub.shutdown();
}

struct Fixed;

#[octo_agent::async_trait]
impl octo_mcp::Elicitor for Fixed {
    async fn answer(&self, q: octo_mcp::Elicitation) -> octo_mcp::ElicitAnswer {
        let mut v = octo_mcp::elicit::defaults(&q.schema);
        v.insert("name".into(), "Grace".into());
        octo_mcp::ElicitAnswer::Accept(v)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_front_end_the_hubs_elicitor_answers_or_the_question_is_declined_and_said() {
    let (hub, source) = hub(vec![stdio("t", &[])]).await;
    let declined = call(&source, "mcp__t__ask", serde_json::json!({})).await.text_content();
    assert!(declined.contains("\"decline\""), "{declined}");
    let notices = hub.take_notices().join("\n");
    assert!(
        notices.contains("`t` asked for input (\"Who are you?\")") && notices.contains("declined"),
        "{notices}"
    );
    hub.shutdown();

    let hub2 = octo_mcp::McpHub::new(vec![stdio("t", &[])], std::env::temp_dir(), &|_| None, &|_| true);
    hub2.use_elicitor(Arc::new(Fixed));
    hub2.start();
    hub2.wait_ready(std::time::Duration::from_secs(20)).await;
    let source2 = octo_mcp::McpSource(Arc::clone(&hub2));
    let answered = call(&source2, "mcp__t__ask", serde_json::json!({})).await.text_content();
    assert!(answered.contains("\"accept\"") && answered.contains("Grace"), "{answered}");
    hub2.shutdown();
}
