// @ts-check
/**
 * import() of a URL chosen at run time (DecodePoolOptions.moduleBase). Plain JavaScript, copied to
 * dist/ as it is: TypeScript would wrap a non-literal import() in a helper that hides the comments
 * below from bundlers, and webpack turns an import() it cannot resolve into an empty context that
 * fails at run time.
 * @param {string} url
 * @returns {Promise<unknown>}
 */
export function importUrl(url) {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ url);
}
