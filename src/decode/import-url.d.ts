export function importUrl(url: string): Promise<unknown>;
