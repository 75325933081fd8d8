//! `octo-engine`: runs octo's built-in local model (llama.cpp) for `octo`, which starts it when a
//! local endpoint is used and talks to it over stdin and stdout. Not meant to be run by hand.

fn main() -> std::process::ExitCode {
    octo_app::models::engine_main()
}
