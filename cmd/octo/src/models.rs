//! `octo models list|pull|rm`: the local models in ~/.octo/models.

use crate::cli::ModelsAction;
use crate::exit::EXIT_ERROR;
#[cfg(feature = "local")]
use crate::exit::EXIT_USAGE;
use crate::out;
use octo_app::Launcher;
use std::process::ExitCode;

/// Runs `octo models …`.
#[cfg(feature = "local")]
pub async fn run(launcher: &Launcher, action: &ModelsAction) -> anyhow::Result<ExitCode> {
    use octo_app::models;
    let home = launcher.home();
    match action {
        ModelsAction::List { available } => {
            let installed = models::list(home);
            if installed.is_empty() {
                out::status(&format!(
                    "no local models in {} (pull one: `octo models pull {}`)",
                    models::dir(home).display(),
                    models::default_choice().name
                ));
            }
            for m in &installed {
                out::stdout(&format!("{:<24} {:>9}  {}\n", m.name, size(m.bytes), m.path.display()));
            }
            if *available {
                out::stdout("\navailable by name (octo models pull NAME):\n");
                out::stdout(&choices(&installed));
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelsAction::Pull { model: None, .. } => {
            let d = models::default_choice();
            out::error(&format!(
                "name the model to pull; octo knows these by name (or give an https:// URL of a .gguf file, or owner/repo/file.gguf on Hugging Face):\n{}start with `octo models pull {}`: it answers with tools on a laptop's CPU",
                choices(&models::list(home)),
                d.name
            ));
            Ok(ExitCode::from(EXIT_USAGE))
        }
        ModelsAction::Pull { model: Some(model), sha256 } => {
            let spec = match models::spec(model, sha256.as_deref()) {
                Ok(s) => s,
                Err(e) => {
                    out::error(&e.to_string());
                    return Ok(ExitCode::from(EXIT_USAGE));
                }
            };
            match pull(launcher, &spec).await {
                Ok(path) => {
                    out::status(&format!(
                        "{} is ready: {} (use it with `octo --endpoint local --model {}`)",
                        spec.name,
                        path.display(),
                        spec.name
                    ));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    out::error(&e.to_string());
                    Ok(ExitCode::from(EXIT_ERROR))
                }
            }
        }
        ModelsAction::Rm { name } => match models::remove(home, name) {
            Ok(path) => {
                out::status(&format!("removed {}", path.display()));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                out::error(&e.to_string());
                Ok(ExitCode::from(EXIT_USAGE))
            }
        },
    }
}

/// Downloads `spec` with a progress bar on stderr (bytes, rate, time left); an interrupted
/// download resumes.
#[cfg(feature = "local")]
pub async fn pull(
    launcher: &Launcher,
    spec: &octo_app::models::PullSpec,
) -> Result<std::path::PathBuf, octo_app::models::ModelError> {
    out::status(&format!("pulling {} from {}", spec.name, spec.url));
    let mut bar = Bar::default();
    let got = octo_app::models::pull(launcher.home(), spec, &mut bar).await;
    bar.done();
    got
}

/// The models octo knows by name, one per line: name, size, what it can do, about it.
#[cfg(feature = "local")]
fn choices(installed: &[octo_app::models::Installed]) -> String {
    let mut out = String::new();
    for r in octo_app::models::RECOMMENDED {
        let mut marks = Vec::new();
        if r.is_default() {
            marks.push("recommended");
        }
        if installed.iter().any(|m| m.name == r.name) {
            marks.push("installed");
        }
        let marks = if marks.is_empty() { String::new() } else { format!(" ({})", marks.join(", ")) };
        out.push_str(&format!(
            "  {:<20} {:>7}  {}{marks}\n      {}\n",
            r.name,
            size(r.approx_bytes),
            r.abilities(),
            r.about
        ));
    }
    out
}

/// Without the engine: say how to get it.
#[cfg(not(feature = "local"))]
pub async fn run(_: &Launcher, _: &ModelsAction) -> anyhow::Result<ExitCode> {
    out::error("this octo was built without the local model engine; build it with the `local` feature (it needs cmake and libclang)");
    Ok(ExitCode::from(EXIT_ERROR))
}

#[cfg(feature = "local")]
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / f64::from(1u32 << 30)),
        b => format!("{:.0} MB", b as f64 / f64::from(1u32 << 20)),
    }
}

/// A progress bar on stderr (hidden when stderr is not a terminal); a line per 10 % otherwise.
#[cfg(feature = "local")]
#[derive(Default)]
struct Bar {
    bar: Option<indicatif::ProgressBar>,
}

#[cfg(feature = "local")]
impl Bar {
    fn done(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

#[cfg(feature = "local")]
impl octo_app::models::Progress for Bar {
    fn start(&mut self, total: Option<u64>, resumed: u64) {
        let bar = match total {
            Some(t) => indicatif::ProgressBar::new(t),
            None => indicatif::ProgressBar::new_spinner(),
        };
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {bytes_per_sec} {eta}")
        {
            bar.set_style(style);
        }
        bar.set_position(resumed);
        if resumed > 0 {
            out::status(&format!("resuming after {}", size(resumed)));
        }
        self.bar = Some(bar);
    }

    fn advance(&mut self, bytes: u64) {
        if let Some(b) = &self.bar {
            b.inc(bytes);
        }
    }

    fn verifying(&mut self) {
        self.done();
        out::status("checking the SHA-256");
    }
}
