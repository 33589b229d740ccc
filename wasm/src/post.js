// Appended inside emscripten's module factory: lets the JS pool end the pthread workers on close,
// so nothing keeps running after a DecodePool is closed.
Module['terminateThreads'] = () => PThread.terminateAllThreads();
