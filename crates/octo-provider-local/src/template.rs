//! A model's chat template applied through llama.cpp (OpenAI-style messages and tools in, the
//! prompt, grammar and parser settings out), and whether it renders tools at all.

use llama_cpp_2::model::{ChatTemplateResult, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::openai::OpenAIChatTemplateParams;
use octo_agent::ProviderError;
use serde_json::json;

/// The chat template applied: `tools` (OpenAI JSON) for templates that render them, `schema`
/// for the generic JSON answer.
pub(crate) fn render(
    model: &LlamaModel,
    template: &LlamaChatTemplate,
    messages: &str,
    tools: Option<&str>,
    tool_choice: &str,
    schema: Option<&str>,
) -> Result<ChatTemplateResult, ProviderError> {
    let params = OpenAIChatTemplateParams {
        messages_json: messages,
        tools_json: tools,
        tool_choice: tools.map(|_| tool_choice),
        json_schema: schema,
        grammar: None,
        reasoning_format: Some("deepseek"),
        chat_template_kwargs: None,
        add_generation_prompt: true,
        use_jinja: true,
        parallel_tool_calls: true,
        enable_thinking: true,
        add_bos: false,
        add_eos: false,
        parse_tool_calls: tools.is_some(),
    };
    model.apply_chat_template_oaicompat(template, &params).map_err(|e| ProviderError::InvalidRequest {
        status: None,
        message: format!("the model's chat template failed: {e}"),
    })
}

/// Whether the template renders tool definitions (llama.cpp then knows how the model calls
/// them): a probe tool must show up in the prompt or yield a grammar.
pub(crate) fn supports_tools(model: &LlamaModel, template: &LlamaChatTemplate) -> bool {
    let tools = json!([{"type": "function", "function": {
        "name": "octo_probe_tool", "description": "probe", "parameters": {"type": "object", "properties": {}}
    }}])
    .to_string();
    let messages = json!([{"role": "user", "content": "hi"}]).to_string();
    render(model, template, &messages, Some(&tools), "auto", None)
        .is_ok_and(|r| r.grammar.is_some() || r.prompt.contains("octo_probe_tool"))
}
