// Types of scripts/build-state.js (plain JavaScript: npm start and callctl run it before anything is compiled).
export const STAMP: string;
export const GENERATED_CLIENT: string;
export function parseJsonc(text: string): unknown;
export function buildInputs(root: string): string[];
export function newestMtime(
  root: string,
  relativePaths: string[],
  skip?: string[],
): { mtimeMs: number; file: string | null };
export function isStale(stampMtimeMs: number | undefined, newestSourceMtimeMs: number): boolean;
export function buildStatus(root: string): { stale: boolean; reason: string };
export function beginBuild(root: string): number;
export function writeStamp(root: string, startedMs: number): void;
