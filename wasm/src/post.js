// Appended inside emscripten's module factory: lets the JS pool end the pthread workers on close,
// so nothing keeps running after a DecodePool is closed, and lets it count them.
Module['terminateThreads'] = () => PThread.terminateAllThreads();
// The pthread workers emscripten holds (running or parked); 0 once they are terminated.
Module['liveWorkers'] = () => PThread.runningWorkers.length + PThread.unusedWorkers.length;
