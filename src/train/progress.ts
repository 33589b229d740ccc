// A training session's running account: steps and images seen, loss and accuracy read back from
// the GPU without stalling it, per-window throughput, and the step and epoch records it emits.
import type { ViTTrainer } from '../vit/index.ts';
import type { EpochRecord, StepEvent, TrainingEvent, TrainReport } from './events.ts';

interface LossSum {
  loss: number;
  correct: number;
  samples: number;
}

/** Since the previous step event: when it began, images trained, seconds waited for data. */
interface Window {
  t: number;
  images: number;
  waited: number;
}

export class TrainingProgress {
  step = 0;
  /** Training images consumed, across epochs. */
  seen = 0;
  readonly #start = performance.now();
  #pendingLoss: Promise<void> | undefined;
  #epochLoss: LossSum = { loss: 0, correct: 0, samples: 0 };
  #epochStart = performance.now();
  #epochImages = 0;
  #window: Window = { t: performance.now(), images: 0, waited: 0 };

  constructor(
    private readonly trainer: ViTTrainer,
    private readonly report: TrainReport,
    private readonly emit: (e: TrainingEvent) => void,
    private readonly plan: { steps: number; epochs: number; trainCount: number; reportEvery: number },
  ) {}

  /** Continues the account of a resumed session: steps, images seen and the epochs already recorded. */
  restore(state: { step: number; seen: number; epochRecords: readonly EpochRecord[] }): void {
    this.step = state.step;
    this.seen = state.seen;
    this.report.epochs.push(...state.epochRecords);
  }

  /** Seconds since the session started. */
  elapsed(): number {
    return (performance.now() - this.#start) / 1000;
  }

  /** The training loop waited this long for its next batch. */
  waitedForData(seconds: number): void {
    this.report.waitedForDataSeconds += seconds;
    this.#window.waited += seconds;
  }

  /** A step on `images` images was submitted. */
  stepped(images: number): void {
    this.step++;
    this.seen += images;
    this.#epochImages += images;
    this.#window.images += images;
  }

  /** Whether the step just taken completed an epoch (or was the last step). */
  get epochEnded(): boolean {
    return this.seen >= (this.report.epochs.length + 1) * this.plan.trainCount || this.step === this.plan.steps;
  }

  /**
   * Reads loss back every `reportEvery` steps without awaiting it, so the GPU keeps the next
   * steps queued; at an epoch's end, waits for every reading so the epoch's figures are whole.
   */
  async afterStep(): Promise<void> {
    if (this.epochEnded) {
      await this.#pendingLoss;
      this.#readLoss();
      await this.#pendingLoss;
    } else if (this.step % this.plan.reportEvery === 0 && this.#pendingLoss === undefined) this.#readLoss();
  }

  /** Records the epoch just ended with its held-out result and starts the next one's account. */
  endEpoch(heldOut: { accuracy: number; loss: number }): void {
    const seconds = (performance.now() - this.#epochStart) / 1000;
    const e = this.#epochLoss.samples ? this.#epochLoss : { loss: NaN, correct: NaN, samples: 1 };
    const record: EpochRecord = {
      epoch: this.report.epochs.length + 1,
      trainLoss: e.loss / e.samples,
      trainAccuracy: e.correct / e.samples,
      valAccuracy: heldOut.accuracy,
      valLoss: heldOut.loss,
      imagesPerSecond: this.#epochImages / seconds,
      seconds,
      endedAt: this.elapsed(),
    };
    this.report.epochs.push(record);
    this.emit({
      type: 'epoch',
      ...record,
      epochs: this.plan.epochs,
      step: this.step,
      steps: this.plan.steps,
      secondsLeft: this.#secondsLeft(),
    });
    this.#epochLoss = { loss: 0, correct: 0, samples: 0 };
    this.#epochStart = performance.now();
    this.#epochImages = 0;
  }

  /** Waits for a reading still in flight (its failure is not the session's). */
  async settle(): Promise<void> {
    await this.#pendingLoss?.catch(() => undefined);
  }

  #secondsLeft(): number {
    return (this.elapsed() / Math.max(this.step, 1)) * (this.plan.steps - this.step);
  }

  #readLoss(): void {
    const now = performance.now();
    const w = this.#window;
    this.#window = { t: now, images: 0, waited: 0 };
    const step = this.step;
    const epoch = this.seen / this.plan.trainCount;
    this.#pendingLoss = this.trainer
      .readLoss()
      .then((r) => {
        if (r.samples) {
          const sum = this.#epochLoss;
          this.#epochLoss = {
            loss: sum.loss + r.loss * r.samples,
            correct: sum.correct + r.accuracy * r.samples,
            samples: sum.samples + r.samples,
          };
        }
        const seconds = Math.max((now - w.t) / 1000, 1e-9);
        const event: StepEvent = {
          type: 'step',
          step,
          steps: this.plan.steps,
          epoch,
          loss: r.loss,
          accuracy: r.accuracy,
          imagesPerSecond: w.images / seconds,
          waitedForData: w.waited / seconds,
          seconds: this.elapsed(),
          secondsLeft: this.#secondsLeft(),
        };
        this.report.timeline.steps.push(event);
        this.emit(event);
      })
      .finally(() => {
        this.#pendingLoss = undefined;
      });
  }
}
