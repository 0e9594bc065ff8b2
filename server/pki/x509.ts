/**
 * @peculiar/x509 with the Reflect metadata API it needs (through tsyringe) loaded first. Import x509
 * from here, never from the package directly: whichever module loads the package first must have
 * loaded the polyfill before it.
 */
import "reflect-metadata";

export * from "@peculiar/x509";
