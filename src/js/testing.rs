//! Hooks that exist only for the test suite: they make the failure paths reachable from JS.
//!
//! They are compiled only with the `testing` cargo feature, which the release build leaves off
//! (`npm run build:testing` builds the addon the tests load them from), and exported under names
//! starting with `__`, left out of `index.d.ts`.

use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;

use super::scheduler::default_runner;
use super::tasks::TaskOutput;
use crate::batch::Failure;
use crate::scheduler::{Batch, CancelToken, ItemError, Scheduler};

/// A batch of `len` items whose item `panic_at` panics.
struct PanickingBatch {
    len: usize,
    panic_at: usize,
}

impl Batch for PanickingBatch {
    type Sink = ();
    type Mark = ();

    fn len(&self) -> usize {
        self.len
    }
    fn cost(&self, _index: usize) -> usize {
        // Enough for the batch to be spread over the pool rather than run inline.
        1024
    }
    fn new_sink(&self) {}
    fn mark(&self, _sink: &()) {}
    fn process(&self, index: usize, _sink: &mut ()) -> Result<(), ItemError> {
        if index == self.panic_at {
            panic!("test panic at item {index}");
        }
        Ok(())
    }
}

/// The async task behind `__panicInBatch`.
pub struct PanicTask {
    scheduler: Scheduler,
    batch: PanickingBatch,
}

impl Task for PanicTask {
    type Output = TaskOutput<()>;
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(TaskOutput::of(|| {
            let run = self.scheduler.run(&self.batch, &CancelToken::default());
            run.map(|_| ()).map_err(Failure::from).into()
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<()> {
        output.into_result(&env, None)
    }
}

/// Test hook: runs a batch of `len` items on the default scheduler whose item `panicAt` panics.
#[napi(js_name = "__panicInBatch", skip_typescript)]
pub fn panic_in_batch(env: Env, len: u32, panic_at: u32) -> napi::Result<AsyncTask<PanicTask>> {
    Ok(AsyncTask::new(PanicTask {
        scheduler: default_runner(&env)?.scheduler,
        batch: PanickingBatch {
            len: len as usize,
            panic_at: panic_at as usize,
        },
    }))
}

/// Test hook: panics on the calling thread, inside a sync export.
#[napi(js_name = "__panicSync", skip_typescript, catch_unwind)]
pub fn panic_sync() {
    panic!("test panic in a sync call");
}
