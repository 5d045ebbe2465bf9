//! The agent: the tools it may call, the ask_user broker, the agent loop with its inbound
//! hooks (a job's reply, a menu pick, a verdict), and the scheduler its turns run on.

use super::{Delivery, Execution, Hub, Policy, Wiring};
use crate::agent::broker::QuestionBroker;
use crate::agent::inbound::chat::{ChatCommands, Strikes};
use crate::agent::inbound::feedback_hook::FeedbackReplies;
use crate::agent::knowledge::Knowledge;
use crate::agent::notes::MemoryNotes;
use crate::agent::tools::{AskUserTool, CronTool, FeedbackTool, Tool};
use crate::agent::tools::{ListJobsTool, ReadMemoryTool, RememberTool, SearchHistoryTool};
use crate::agent::{Agent, AgentLoop, HistorySink, MicroLimits};
use crate::context::routines::{HistoryHook, HistoryWriter};
use crate::cron::reply::JobReplies;
use crate::cron::tool::JobsCron;
use crate::delivery::hub::Post;
use crate::delivery::targets::Channels;
use crate::discovery::{ActionExecutor, DecisionConsumer, DecisionRouter};
use crate::engine::StartError;
use crate::executor::spawn::ProactiveSpawn;
use crate::llm::provider::SharedProvider;
use crate::sessions::SessionStore;
use crate::spine::{OriginPools, Scheduler};
use std::{cell::OnceCell, rc::Rc, time::Duration};

impl Wiring<'_> {
    pub(in crate::engine) fn question_broker(&self, hub: &Hub) -> Rc<QuestionBroker> {
        let questions = hub.clone();
        Rc::new(QuestionBroker::new(
            Duration::from_secs(self.config.agent.ask_user_timeout_s),
            // On a channel the question goes out as text; the next inbound message answers it.
            Box::new(move |conversation, q| {
                let (channel, chat_id) = raven_proto::split_target(conversation);
                let text =
                    raven_proto::OutboundText::proactive(format!("ask-{}", q.batch), &channel, &chat_id, q.render());
                let hub = questions.clone();
                actix_rt::spawn(async move {
                    let _ = hub.call_async(Post::text(text)).await;
                });
            }),
        ))
    }

    pub(in crate::engine) fn tools(&self, delivery: &Delivery, broker: &Rc<QuestionBroker>) -> Vec<Rc<dyn Tool>> {
        let (config, store) = (self.config, delivery.jobs.clone());
        let cron = JobsCron { store, tz: self.tz, order: config.general.date_order, channels: Channels::of(config) };
        let jobs: Rc<dyn crate::agent::tools::CronJobs> = Rc::new(cron);
        let (dir, tz) = (self.dir, self.tz);
        vec![
            Rc::new(FeedbackTool { tracker: delivery.tracker.clone() }),
            Rc::new(AskUserTool { broker: broker.clone() }),
            Rc::new(CronTool { jobs: jobs.clone() }),
            Rc::new(ReadMemoryTool { memory: dir.memory() }),
            Rc::new(RememberTool { notes: MemoryNotes { path: dir.memory(), tz } }),
            Rc::new(SearchHistoryTool { history: dir.history(), sessions: dir.sessions(), tz }),
            Rc::new(ListJobsTool { jobs }),
        ]
    }

    /// The chat commands answered before any model (`/start`, `/remind`, `/list`, …).
    fn chat_commands(&self, jobs: &crate::cron::store::JobsStore) -> ChatCommands {
        let config = self.config;
        let cron = JobsCron {
            store: jobs.clone(),
            tz: self.tz,
            order: config.general.date_order,
            channels: Channels::of(config),
        };
        let min_gap = chrono::Duration::seconds(i64::try_from(config.cron.strike_min_gap_s).unwrap_or(i64::MAX));
        ChatCommands {
            jobs: cron,
            clock: self.clock.clone(),
            strikes: Strikes { limit: config.cron.strike_limit, min_gap },
            has_model: !config.llm.base_url.trim().is_empty(),
            journal: self.dir.journal(),
            language: config.general.language,
            memory: self.dir.memory(),
        }
    }

    /// The agent loop and the scheduler its turns run on, and the cell its decision consumer
    /// finds the spawn in once `spawn` has made it.
    pub(in crate::engine) fn agent_and_scheduler(
        &self,
        provider: &SharedProvider,
        policy: &Policy,
        x: &Execution,
        delivery: &Delivery,
        tools: Vec<Rc<dyn Tool>>,
    ) -> Result<(Scheduler, Rc<OnceCell<ProactiveSpawn>>), StartError> {
        let spawn_late = Rc::new(OnceCell::new());
        let consumer = self.decision_consumer(provider, policy, &tools, spawn_late.clone())?;
        let (config, clock, jobs, tracker) = (self.config, &self.clock, &delivery.jobs, &delivery.tracker);
        let replies = FeedbackReplies {
            tracker: tracker.clone(),
            jobs: jobs.clone(),
            verdicts: Rc::new(crate::cron::later::Verdicts::of(self.dir, self.config)),
            tz: self.tz,
            clock: clock.clone(),
            morning: config.brief.time(&config.policy.quiet_hours).0,
            language: config.general.language,
            memory: self.dir.memory(),
        };
        let agent = Rc::new(AgentLoop {
            provider: provider.clone(),
            embedded: crate::engine::stand_in(self.config, provider),
            tools,
            sessions: SessionStore::new(self.dir.sessions()),
            injector: Some(x.injector.clone()),
            inbound_hooks: vec![
                Rc::new(JobReplies(jobs.clone())),
                Rc::new(consumer),
                Rc::new(replies),
                Rc::new(self.chat_commands(jobs)),
            ],
            clock: clock.clone(),
            max_iterations: config.agent.max_iterations,
            conversations: Some(delivery.conversations.clone()),
            feedback: Some(tracker.clone()),
            history: self.history(),
            knowledge: Some(Knowledge {
                memory: self.dir.memory(),
                sessions: self.dir.sessions(),
                tz: self.tz,
                order: config.general.date_order,
            }),
            micro: MicroLimits {
                max_iterations: config.agent.subagent_max_iterations,
                max_tokens: config.agent.subagent_max_tokens,
            },
        });
        let pools = OriginPools::new(config.agent.user_pool, config.agent.system_pool);
        let scheduler = Scheduler::new(Rc::new(Agent(agent)), pools).metered(&self.metrics, "Spine");
        Ok((scheduler, spawn_late))
    }

    fn decision_consumer(
        &self,
        provider: &SharedProvider,
        policy: &Policy,
        tools: &[Rc<dyn Tool>],
        spawn: Rc<OnceCell<ProactiveSpawn>>,
    ) -> Result<DecisionConsumer, StartError> {
        let router = DecisionRouter {
            store: self.menus()?,
            // The rules provider cannot classify free text: only numbers and /pick count.
            classifier: (provider.name() != "rules").then(|| provider.clone()),
            threshold: self.config.discovery.classifier_threshold,
        };
        let (policy, tools, clock) = (policy.clone(), tools.to_vec(), self.clock.clone());
        let executor = ActionExecutor { policy, tools, spawn: Rc::downgrade(&spawn), clock };
        Ok(DecisionConsumer { router, executor, clock: self.clock.clone() })
    }

    /// Kept at least as long as a routine is remembered.
    fn history(&self) -> Option<Rc<dyn HistorySink>> {
        let (context, tz) = (&self.config.context, self.tz);
        context.history_enabled.then(|| {
            let writer = HistoryWriter::new(self.dir.history(), context.routine_forget_days.max(30));
            Rc::new(HistoryHook { writer, tz }) as Rc<dyn HistorySink>
        })
    }
}
