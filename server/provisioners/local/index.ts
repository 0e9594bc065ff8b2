/** The local provisioner, whose modules live in this folder. */
export * from "./provisioner";
