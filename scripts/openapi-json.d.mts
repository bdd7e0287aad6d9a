export declare const OPENAPI_YAML: URL;
export declare function openApiDocument(): Promise<unknown>;
