//! `weft agent inspect` and `weft agent select`: agent capability catalogs.

use std::io::Write;
use std::path::{Path, PathBuf};

use anstyle::Style;
use clap::{Args, Subcommand};
use serde::Serialize;
use weft_catalog::{
    CapabilityRecord, CatalogError, CatalogSource, DiscoveredAgent, discover_agents, select_agents,
};

use crate::report::{Problem, Report};

/// `weft agent …` subcommands.
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Show the capability catalog of one agent directory, or of every agent in a folder.
    Inspect(InspectArgs),
    /// Pick the agents whose catalogs cover every needed capability id.
    Select(SelectArgs),
}

/// Arguments of `weft agent inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// An agent directory, or a folder whose subfolders are agents.
    pub dir: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `weft agent select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Needed capability ids, comma-separated; may be repeated.
    #[arg(
        long,
        value_delimiter = ',',
        required = true,
        value_name = "ID[,ID...]"
    )]
    pub needs: Vec<String>,
    /// A folder of agent directories (or one agent directory).
    pub root: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs an agent subcommand; `Ok(true)` on success.
pub fn run(command: &AgentCommand) -> std::io::Result<bool> {
    match command {
        AgentCommand::Inspect(args) => inspect(args),
        AgentCommand::Select(args) => select(args),
    }
}

/// A catalog problem in the shape every weft command reports problems in.
pub fn problem_of(error: &CatalogError) -> Problem {
    let mut problem = match error.position() {
        Some(p) => Problem::at(
            error.path(),
            weft_contract::source::Position {
                line: p.line,
                column: p.column,
            },
            error.code(),
            error.to_string(),
        ),
        None => Problem::io(error.path(), error.code(), error.to_string()),
    };
    if problem.path.is_empty() {
        problem.path = ".".into();
    }
    problem
}

fn source_name(source: &CatalogSource) -> Option<&'static str> {
    match source {
        CatalogSource::None => None,
        CatalogSource::TomlFile(_) => Some("toml"),
        CatalogSource::JsonFile(_) => Some("json"),
        CatalogSource::Directory(_) => Some("directory"),
    }
}

#[derive(Serialize)]
struct AgentJson<'a> {
    name: &'a str,
    path: String,
    /// `toml`, `json`, `directory`, or null when the agent has no catalog.
    catalog: Option<&'static str>,
    capabilities: &'a [CapabilityRecord],
}

#[derive(Serialize)]
struct InspectJson<'a> {
    agents: Vec<AgentJson<'a>>,
    errors: Vec<Problem>,
}

fn discover(root: &Path) -> Result<Vec<DiscoveredAgent>, Problem> {
    discover_agents(root).map_err(|e| problem_of(&e))
}

fn inspect(args: &InspectArgs) -> std::io::Result<bool> {
    let agents = match discover(&args.dir) {
        Ok(agents) => agents,
        Err(problem) => return fail_with(vec![problem], args.json),
    };
    let mut json = InspectJson {
        agents: Vec::new(),
        errors: Vec::new(),
    };
    for agent in &agents {
        match &agent.catalog {
            Ok(catalog) => json.agents.push(AgentJson {
                name: &agent.name,
                path: agent.dir.display().to_string(),
                catalog: source_name(&catalog.source),
                capabilities: &catalog.records,
            }),
            Err(error) => json.errors.push(problem_of(error)),
        }
    }
    if agents.is_empty() {
        json.errors.push(Problem::io(
            &args.dir,
            "no_agents",
            "no agent directories found (an agent has a capability catalog or an AGENT.md)".into(),
        ));
    }
    let ok = json.errors.is_empty();
    if args.json {
        print_json(&json)?;
        return Ok(ok);
    }
    let mut out = anstream::stdout();
    let bold = Style::new().bold();
    for agent in &json.agents {
        let count = agent.capabilities.len();
        let what = agent.catalog.unwrap_or("no catalog");
        writeln!(
            out,
            "{bold}{}{bold:#}  {}  ({what}, {count} capabilit{})",
            agent.name,
            agent.path,
            if count == 1 { "y" } else { "ies" }
        )?;
        let id_width = agent
            .capabilities
            .iter()
            .map(|r| r.id.len())
            .max()
            .unwrap_or(0);
        let version_width = agent
            .capabilities
            .iter()
            .map(|r| r.version.as_deref().map_or(1, str::len))
            .max()
            .unwrap_or(1);
        for record in agent.capabilities {
            writeln!(
                out,
                "  {:id_width$}  {:version_width$}  {}  {}",
                record.id,
                record.version.as_deref().unwrap_or("-"),
                record.digest,
                record.summary
            )?;
        }
    }
    print_problems(json.errors)?;
    Ok(ok)
}

#[derive(Serialize)]
struct SelectedJson {
    name: String,
    path: String,
    /// Capability ids the agent offers beyond the needs (its rank key).
    extra_ids: Vec<String>,
}

#[derive(Serialize)]
struct RejectedJson {
    name: String,
    path: String,
    missing: Vec<String>,
    error: Option<Problem>,
}

#[derive(Serialize)]
struct SelectJson {
    needs: Vec<String>,
    selected: Vec<SelectedJson>,
    rejected: Vec<RejectedJson>,
    errors: Vec<Problem>,
}

impl SelectJson {
    fn failed(needs: Vec<String>, problem: Problem) -> Self {
        SelectJson {
            needs,
            selected: Vec::new(),
            rejected: Vec::new(),
            errors: vec![problem],
        }
    }
}

fn select(args: &SelectArgs) -> std::io::Result<bool> {
    let mut needs: Vec<String> = args
        .needs
        .iter()
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    needs.dedup();
    let failure = if needs.is_empty() {
        Some(Problem::io(
            &args.root,
            "no_needs",
            "--needs names no capability id".into(),
        ))
    } else {
        None
    };
    let agents = match failure.map_or_else(|| discover(&args.root), Err) {
        Ok(agents) => agents,
        Err(problem) => {
            if args.json {
                print_json(&SelectJson::failed(needs, problem))?;
            } else {
                print_problems(vec![problem])?;
            }
            return Ok(false);
        }
    };
    let selection = select_agents(&agents, &needs);
    let json = SelectJson {
        needs: needs.clone(),
        selected: selection
            .selected
            .iter()
            .map(|s| SelectedJson {
                name: s.agent.name.clone(),
                path: s.agent.dir.display().to_string(),
                extra_ids: s.extra_ids.clone(),
            })
            .collect(),
        rejected: selection
            .rejected
            .iter()
            .map(|r| RejectedJson {
                name: r.agent.name.clone(),
                path: r.agent.dir.display().to_string(),
                missing: r.missing.clone(),
                error: r.load_error().map(problem_of),
            })
            .collect(),
        errors: Vec::new(),
    };
    let ok = !json.selected.is_empty();
    if args.json {
        print_json(&json)?;
        return Ok(ok);
    }
    let mut out = anstream::stdout();
    let bold = Style::new().bold();
    for s in &json.selected {
        write!(out, "{bold}{}{bold:#}  covers all needs", s.name)?;
        if s.extra_ids.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "; also offers {}", s.extra_ids.join(", "))?;
        }
    }
    for r in &json.rejected {
        match &r.error {
            Some(problem) => writeln!(
                out,
                "{}  rejected: catalog failed to load ({}: {})",
                r.name, problem.code, problem.message
            )?,
            None => writeln!(
                out,
                "{}  rejected: missing {}",
                r.name,
                r.missing.join(", ")
            )?,
        }
    }
    if !ok {
        writeln!(
            anstream::stderr(),
            "no agent covers every need: {}",
            needs.join(", ")
        )?;
    }
    Ok(ok)
}

fn print_json(value: &impl Serialize) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)
}

fn print_problems(errors: Vec<Problem>) -> std::io::Result<()> {
    Report {
        ok: errors.is_empty(),
        descriptors: Vec::new(),
        agent_capabilities: Vec::new(),
        errors,
    }
    .print_human()
}

fn fail_with(errors: Vec<Problem>, json: bool) -> std::io::Result<bool> {
    if json {
        print_json(&InspectJson {
            agents: Vec::new(),
            errors,
        })?;
    } else {
        print_problems(errors)?;
    }
    Ok(false)
}
