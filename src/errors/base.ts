// The two bases every Tandem error class stands on; index.ts is the room's door.
/** The base of Tandem's errors: `code` is the one tag to switch on (each subclass lists its codes). */
export abstract class TandemError extends Error {
  abstract readonly code: string;
}

/** A TandemError whose code is given when it is made: the shape of most of Tandem's error classes. */
export abstract class CodedError<Code extends string> extends TandemError {
  constructor(
    readonly code: Code,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
