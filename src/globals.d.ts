/** Replaced at build time with package.json's version. */
declare const SVC_VERSION: string;
