import type { Command } from 'commander';

export declare const GRAMMAR_FILE: string;
export declare function argvGrammar(program: Command): { valueOptions: string[]; groups: string[] };
export declare function writeArgvGrammar(dir: string, version: string): Promise<void>;
