//! Command-line arguments, parsed into a [`RunSpec`]: `tallmc sample <SAMPLER>` (one
//! subcommand per sampler, whose flags are the sampler's settings type itself,
//! [`SamplerSettings`], so that the command, Python and Rust share one definition of each
//! setting), with the model, data, chain and output flags common to all; and `tallmc repeat`,
//! which runs a recorded run again. Nothing past this file sees a clap type.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tallmc_run::spec::InitChoice;
use tallmc_run::{
    CountSpec, DataSpec, Execution, ModelSpec, OffsetSpec, OutputSpec, RegressionSpec, RobustSpec,
    RunSpec, SamplerSettings,
};

/// tallmc: MCMC for Bayesian inference on tall data.
#[derive(Debug, Parser)]
#[command(name = "tallmc", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process: its size does not matter
pub enum Command {
    /// Sample a model's posterior on a data file; write one CSV per chain (CmdStan layout) and
    /// summary.json to --out.
    ///
    /// Choose the sampler as a subcommand, e.g. `tallmc sample hmc --model logistic --data
    /// higgs.bin --out runs/higgs`; `tallmc sample SAMPLER --help` lists its flags.
    Sample(SampleArgs),

    /// Run a recorded run again, bit for bit: the run of a summary.json (its "spec"), into a
    /// new output directory.
    ///
    /// Same data file, same settings, same seed, same platform → the same draws. `tallmc repeat
    /// runs/a/summary.json --out runs/b`.
    Repeat(RepeatArgs),

    /// Convert Parquet, CSV or .npy data into the tall-data binary format, which --data
    /// memory-maps: streamed in chunks, so memory stays small whatever the number of rows.
    ///
    /// `tallmc convert shards/ --out data.bin` (a Parquet directory: its shards in natural
    /// order); several inputs are concatenated in the order given and must have the same
    /// covariates. Writes data.bin and its header data.json.
    Convert(ConvertArgs),
}

/// `tallmc convert IN… --out FILE [flags]`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Inputs: .parquet files or directories of Parquet shards, .csv files (header; column y
    /// the response), .npy files of X (with --y-npy), or binary files; concatenated in order.
    #[arg(required = true, value_name = "IN")]
    pub inputs: Vec<PathBuf>,

    /// The output: name.bin (name.json, its header, is written beside it).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// The response's column of CSV and Parquet inputs.
    #[arg(long = "y", value_name = "COLUMN", default_value = "y")]
    pub response: String,

    /// The covariates, by column name and in this order (default: every column but the
    /// response; for Parquet, every such column holding numbers).
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub columns: Option<Vec<String>>,

    /// With one .npy input (the covariates X): the .npy file of the responses y.
    #[arg(long, value_name = "FILE")]
    pub y_npy: Option<PathBuf>,

    /// Replace an existing output file.
    #[arg(long)]
    pub overwrite: bool,

    /// No progress bar (it is drawn only when stderr is a terminal anyway).
    #[arg(long)]
    pub no_progress: bool,
}

/// `tallmc sample <SAMPLER> [flags]`.
#[derive(Debug, Args)]
#[command(
    subcommand_value_name = "SAMPLER",
    subcommand_help_heading = "Samplers",
    disable_help_subcommand = true
)]
pub struct SampleArgs {
    /// The sampler and its settings.
    #[command(subcommand)]
    pub sampler: SamplerSettings,

    #[command(flatten)]
    pub common: Common,
}

/// The models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelKind {
    /// Bayesian logistic regression: y ∈ {0,1}, θ ~ N(0, prior_sd² I). Parameters named after
    /// the data's columns (`intercept` first).
    Logistic,
    /// Probit regression: y ∈ {0,1}, P(y = 1) = Φ(xᵀθ), θ ~ N(0, prior_sd² I).
    Probit,
    /// Poisson regression (counts, log link): log μ = xᵀβ (+ --offset / --exposure),
    /// β ~ N(0, prior_sd² I).
    Poisson,
    /// Negative binomial regression (NB2, counts, log link): Var = μ + μ²/φ, θ = (β, log φ),
    /// all ~ N(0, prior_sd²); the last parameter is log_phi.
    NegativeBinomial,
    /// Linear regression with unknown noise sd: θ = (β, log σ), all ~ N(0, prior_sd²).
    /// Parameters named after the data's columns, then log_sigma.
    Linear,
    /// Robust linear regression: Student-t noise with --nu degrees of freedom (default 4),
    /// θ = (β, log σ), all ~ N(0, prior_sd²); the last parameter is log_sigma.
    Robust,
    /// Gaussian N(μ, σ²) on column y, θ = (μ, log σ), flat priors. Parameters mu, log_sigma.
    Gaussian,
    /// Gaussian mean with known σ (--sigma) on column y, μ ~ N(prior_mean, prior_sd²).
    /// Parameter mu.
    GaussianMean,
}

/// The flags every sampler takes: the model, the data, the chains and the output. They may
/// come before or after the sampler's name.
#[derive(Debug, Args)]
#[command(next_help_heading = "Model, data and chains")]
pub struct Common {
    /// Model to fit (required).
    #[arg(long, value_enum, global = true)]
    pub model: Option<ModelKind>,

    /// Data file (required): .csv (header; column y is the response, the other columns
    /// covariates, which name the parameters), Parquet (a .parquet file or a directory of
    /// shards, read in natural order: part.2 before part.10; the covariates are the numeric
    /// columns other than the response), the tall-data binary format (.bin with its .json
    /// header beside it; either path works), or a NumPy .npy file of the covariates X (n × p
    /// float64, C order; give y with --y-npy; parameters x0, x1, …). Binary and .npy files are
    /// memory-mapped, never copied; CSV and Parquet are read into memory (`tallmc convert`
    /// turns them into the binary format once).
    #[arg(long, value_name = "FILE", global = true)]
    pub data: Option<PathBuf>,

    /// The response's column of a CSV or Parquet --data source (default y).
    #[arg(long = "y", value_name = "COLUMN", global = true)]
    pub response: Option<String>,

    /// The covariates, by column name and in this order (default: every column but the
    /// response; for Parquet, every such column holding numbers). They name the parameters.
    #[arg(long, value_name = "A,B,…", value_delimiter = ',', global = true)]
    pub columns: Option<Vec<String>>,

    /// With a .npy --data file: the .npy file of the responses y (n float64 values).
    #[arg(long, value_name = "FILE", global = true)]
    pub y_npy: Option<PathBuf>,

    /// Fit an intercept (the regressions; the default, as in the Python package).
    #[arg(long, global = true, overrides_with = "no_intercept")]
    pub intercept: bool,

    /// Fit no intercept (the regressions).
    #[arg(long, global = true)]
    pub no_intercept: bool,

    /// Standardize every covariate column (mean 0, population sd 1; the regressions only).
    /// Applied on the fly: a memory-mapped file is never copied.
    #[arg(long, global = true)]
    pub standardize: bool,

    /// A data column added to every linear predictor as it is, with no coefficient (poisson
    /// and negative-binomial): log μ = xᵀβ + offset.
    #[arg(long, value_name = "COLUMN", global = true)]
    pub offset: Option<String>,

    /// A data column t > 0 of exposures (poisson and negative-binomial): μ = t·exp(xᵀβ), i.e.
    /// the offset log t.
    #[arg(long, value_name = "COLUMN", global = true)]
    pub exposure: Option<String>,

    /// Degrees of freedom ν of the Student-t noise (robust only). [default: 4]
    #[arg(long, value_name = "NU", global = true)]
    pub nu: Option<f64>,

    /// Prior sd s: of every coefficient (the regressions; also of log σ and log φ), or of μ
    /// (gaussian-mean). Not used by gaussian (flat priors). [default: 10]
    #[arg(long, value_name = "S", global = true)]
    pub prior_sd: Option<f64>,

    /// Prior mean of μ (gaussian-mean only). [default: 0]
    #[arg(long, value_name = "M", global = true)]
    pub prior_mean: Option<f64>,

    /// Known noise sd σ (gaussian-mean only; required there).
    #[arg(long, value_name = "S", global = true)]
    pub sigma: Option<f64>,

    /// Number of chains (run in parallel).
    #[arg(long, value_name = "C", default_value_t = 4, global = true)]
    pub chains: usize,

    /// Warmup (adaptation) iterations per chain; not written to the CSV files.
    #[arg(long, value_name = "W", default_value_t = 1000, global = true)]
    pub warmup: usize,

    /// Draws per chain after warmup.
    #[arg(long, value_name = "D", default_value_t = 1000, global = true)]
    pub draws: usize,

    /// Master seed: chain k uses ChaCha8 stream k+1 of this seed. Same seed → same draws.
    #[arg(long, value_name = "S", default_value_t = 1, global = true)]
    pub seed: u64,

    /// Output directory (required; created if needed): chain_1.csv … chain_C.csv and
    /// summary.json. A directory that is not empty is refused unless --overwrite.
    #[arg(long, value_name = "DIR", global = true)]
    pub out: Option<PathBuf>,

    /// Reuse a non-empty --out: the run there (chain_*.csv, skeleton_*.csv, summary.json) is
    /// removed first, so that runs are never mixed.
    #[arg(long, global = true)]
    pub overwrite: bool,

    /// How chains start.
    #[arg(long, value_enum, default_value_t = InitChoice::Dispersed, global = true)]
    pub init: InitChoice,

    #[command(flatten)]
    pub execution: ExecutionArgs,
}

/// How the run executes (nothing here changes the draws).
#[derive(Debug, Args)]
pub struct ExecutionArgs {
    /// Worker threads for the chains and the full-data sums. [default: all cores]
    #[arg(long, value_name = "N", global = true)]
    pub threads: Option<usize>,

    /// Draw no progress bar (one is drawn only when stderr is a terminal).
    #[arg(long, global = true)]
    pub no_progress: bool,

    /// Print no report on stderr at the end (summary.json is written either way).
    #[arg(long, global = true)]
    pub no_report: bool,
}

impl ExecutionArgs {
    fn execution(&self) -> Execution {
        Execution { threads: self.threads, progress: !self.no_progress, report: !self.no_report }
    }
}

/// `tallmc repeat SUMMARY --out DIR`.
#[derive(Debug, Args)]
pub struct RepeatArgs {
    /// The summary.json of the run to repeat (or a file holding just its "spec").
    #[arg(value_name = "SUMMARY")]
    pub summary: PathBuf,

    /// Output directory of the new run (created if needed; refused if not empty, unless
    /// --overwrite).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Reuse a non-empty --out: the run there is removed first.
    #[arg(long)]
    pub overwrite: bool,

    #[command(flatten)]
    pub execution: ExecutionArgs,
}

/// A usage error of a missing required flag, worded and exiting (status 2) as clap's own.
fn missing(flag: &str, sampler: &str) -> clap::Error {
    let text = format!(
        "the following required argument was not provided:\n  {flag}\n\nUsage: tallmc sample \
         {sampler} --model <MODEL> --data <FILE> --out <DIR> [OPTIONS]\n\nFor more information, \
         try '--help'.\n"
    );
    clap::Error::raw(clap::error::ErrorKind::MissingRequiredArgument, text)
}

impl SampleArgs {
    /// The run these flags describe: a usage error (exit status 2) if a required flag is
    /// missing, a one-line error for a flag that does not apply to the model.
    pub fn spec(self) -> Result<RunSpec, SpecError> {
        let c = self.common;
        let name = self.sampler.name();
        let model = c.model.ok_or_else(|| missing("--model <MODEL>", &name))?;
        let data = c.data.ok_or_else(|| missing("--data <FILE>", &name))?;
        let out = c.out.ok_or_else(|| missing("--out <DIR>", &name))?;
        let regression = !matches!(model, ModelKind::Gaussian | ModelKind::GaussianMean);
        let counts = matches!(model, ModelKind::Poisson | ModelKind::NegativeBinomial);
        let invalid = |m: &str| Err(SpecError::Invalid(m.to_string()));
        const REGRESSIONS: &str = "logistic, probit, poisson, negative-binomial, linear or robust";
        if !regression && (c.intercept || c.no_intercept) {
            let flag = if c.intercept { "--intercept" } else { "--no-intercept" };
            return invalid(&format!("{flag} applies only to --model {REGRESSIONS}"));
        }
        if !regression && c.standardize {
            return invalid(&format!("--standardize applies only to --model {REGRESSIONS}"));
        }
        if !counts && (c.offset.is_some() || c.exposure.is_some()) {
            let flag = if c.offset.is_some() { "--offset" } else { "--exposure" };
            return invalid(&format!(
                "{flag} applies only to --model poisson or negative-binomial (count models)"
            ));
        }
        if model != ModelKind::Robust && c.nu.is_some() {
            return invalid(
                "--nu applies only to --model robust (the Student-t degrees of freedom)",
            );
        }
        if model != ModelKind::GaussianMean && c.sigma.is_some() {
            return invalid("--sigma applies only to --model gaussian-mean (the known noise sd)");
        }
        if model != ModelKind::GaussianMean && c.prior_mean.is_some() {
            return invalid("--prior-mean applies only to --model gaussian-mean");
        }
        if model == ModelKind::Gaussian && c.prior_sd.is_some() {
            return invalid("--prior-sd does not apply to --model gaussian (its priors are flat)");
        }
        let regression = RegressionSpec {
            prior_sd: c.prior_sd.unwrap_or(RegressionSpec::default().prior_sd),
            intercept: !c.no_intercept,
            standardize: c.standardize,
            column_moments: None,
        };
        let count = CountSpec {
            regression: regression.clone(),
            offset: OffsetSpec { offset: c.offset, exposure: c.exposure },
        };
        let model = match model {
            ModelKind::Logistic => ModelSpec::Logistic(regression),
            ModelKind::Probit => ModelSpec::Probit(regression),
            ModelKind::Poisson => ModelSpec::Poisson(count),
            ModelKind::NegativeBinomial => ModelSpec::NegativeBinomial(count),
            ModelKind::Linear => ModelSpec::Linear(regression),
            ModelKind::Robust => ModelSpec::Robust(RobustSpec {
                regression,
                nu: c.nu.unwrap_or(RobustSpec::default().nu),
            }),
            ModelKind::Gaussian => ModelSpec::Gaussian {},
            ModelKind::GaussianMean => {
                let Some(sigma) = c.sigma else {
                    return invalid("--model gaussian-mean needs --sigma S, the known noise sd");
                };
                ModelSpec::GaussianMean {
                    sigma,
                    prior_mean: c.prior_mean.unwrap_or(0.0),
                    prior_sd: c.prior_sd.unwrap_or(RegressionSpec::default().prior_sd),
                }
            }
        };
        let source =
            DataSpec::File { path: data, y_npy: c.y_npy, response: c.response, columns: c.columns };
        let mut spec = RunSpec::new(model, source, self.sampler);
        spec.chains = c.chains;
        spec.warmup = c.warmup;
        spec.draws = c.draws;
        spec.seed = c.seed;
        spec.init = c.init;
        spec.output = OutputSpec { dir: Some(out), overwrite: c.overwrite };
        spec.execution = c.execution.execution();
        spec.validate().map_err(|e| SpecError::Invalid(e.to_string()))?;
        Ok(spec)
    }
}

impl RepeatArgs {
    /// The recorded run with this command's output directory and execution flags.
    pub fn spec(&self) -> Result<RunSpec, SpecError> {
        let path = &self.summary;
        let text = std::fs::read_to_string(path)
            .map_err(|e| SpecError::Invalid(format!("cannot read {}: {e}", path.display())))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| SpecError::Invalid(format!("{}: not JSON ({e})", path.display())))?;
        let spec_value = value.get("spec").cloned().unwrap_or(value);
        let mut spec: RunSpec = serde_json::from_value(spec_value).map_err(|e| {
            SpecError::Invalid(format!(
                "{}: no run recorded there ({e}); expected a summary.json written by tallmc \
                 sample",
                path.display()
            ))
        })?;
        spec.output = OutputSpec { dir: Some(self.out.clone()), overwrite: self.overwrite };
        spec.execution = self.execution.execution();
        spec.validate().map_err(|e| SpecError::Invalid(e.to_string()))?;
        Ok(spec)
    }
}

/// Flags that do not make a run.
#[derive(Debug)]
pub enum SpecError {
    /// A required flag is missing: clap's usage error (exit status 2).
    Usage(clap::Error),
    /// A flag's value is wrong or does not apply: a one-line error (exit status 1).
    Invalid(String),
}

impl From<clap::Error> for SpecError {
    fn from(e: clap::Error) -> Self {
        Self::Usage(e)
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    fn parse(args: &[&str]) -> RunSpec {
        let mut argv = vec!["tallmc"];
        argv.extend(args);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Sample(a) => a.spec().unwrap(),
            Command::Repeat(_) | Command::Convert(_) => unreachable!(),
        }
    }

    /// The settings a sampler gets from no flags are its settings type's serde defaults: one
    /// definition of every default for the command, Python and a spec file.
    #[test]
    fn flag_defaults_are_the_settings_defaults() {
        let base = ["--model", "logistic", "--data", "d.csv", "--out", "o"];
        let sample = Cli::command();
        let sample = sample.find_subcommand("sample").unwrap();
        for sub in sample.get_subcommands() {
            let name = sub.get_name();
            let mut args = vec!["sample", name];
            let mut json = serde_json::json!({ "name": name });
            if matches!(name, "sgld" | "sghmc" | "sgnht") {
                args.extend(["--step-size", "0.01"]);
                json["step_size"] = serde_json::json!(0.01);
            }
            args.extend(base);
            let from_flags = parse(&args).sampler;
            let from_json: SamplerSettings = serde_json::from_value(json).unwrap();
            assert_eq!(from_flags, from_json, "{name}");
        }
    }

    #[test]
    fn an_intercept_is_fitted_unless_no_intercept() {
        let base = ["sample", "nuts", "--model", "logistic", "--data", "d.csv", "--out", "o"];
        let fits = |extra: &[&str]| {
            let mut args = base.to_vec();
            args.extend(extra);
            match parse(&args).model {
                ModelSpec::Logistic(r) => r.intercept,
                other => panic!("{other:?}"),
            }
        };
        assert!(fits(&[]));
        assert!(fits(&["--intercept"]));
        assert!(!fits(&["--no-intercept"]));
    }

    #[test]
    fn common_flags_may_come_before_the_sampler() {
        let spec =
            parse(&["sample", "--model", "logistic", "--data", "d.csv", "--out", "o", "hmc"]);
        assert_eq!(spec.sampler.name(), "hmc");
    }
}
