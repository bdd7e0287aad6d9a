import type { Plugin } from 'esbuild';

export declare const tableWidth: Plugin;
export declare const tableWithoutColors: Plugin;
export declare const tableCells: Plugin;
export declare const tablePlugins: Plugin[];
