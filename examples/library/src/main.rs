//! `octo-library-example "what does notes.txt say?"` in a directory with files: the answer on
//! stdout. The key is read from `ANTHROPIC_API_KEY`, the endpoint from `ANTHROPIC_BASE_URL`.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args().nth(1).ok_or("usage: octo-library-example PROMPT")?;
    let base = std::env::var("ANTHROPIC_BASE_URL").unwrap_or_else(|_| "https://api.anthropic.com".into());
    let key = std::env::var("ANTHROPIC_API_KEY").ok();
    let here = std::env::current_dir()?;
    let answer = octo_library_example::ask(&base, key, "claude-sonnet-4-5", &here, &prompt).await?;
    println!("{answer}");
    Ok(())
}
