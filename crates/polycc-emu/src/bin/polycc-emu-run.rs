//! `polycc-emu-run FILE`: runs a scenario file in the emulated testbed and prints its summary
//! as JSON (as root). The Python CLI (`polycc run FILE --backend emu`) is the full tool; this
//! one is for the crate's own tests and for debugging without Python.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: polycc-emu-run FILE");
        return ExitCode::from(2);
    };
    let registry = polycc::Registry::standard();
    let model = match polycc_sim::scenario::load_file(std::path::Path::new(path), &registry) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match polycc_emu::run(&model, &registry, &polycc_emu::Options::default()) {
        Ok(out) => match serde_json::to_string_pretty(&out.summary) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("internal error: {e}");
                ExitCode::from(1)
            }
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(if e.is_user_error() { 2 } else { 1 })
        }
    }
}
