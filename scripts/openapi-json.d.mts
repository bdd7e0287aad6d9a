export declare const OPENAPI_YAML: URL;
export declare function openApiDocument(): Promise<unknown>;
export declare function bundleDefines(version: string): Promise<Record<string, string>>;
