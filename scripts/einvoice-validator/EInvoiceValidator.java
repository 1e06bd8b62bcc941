// The e-invoice tests' validator (docs/e-invoicing.md "Validation"): one long-lived JVM that validates many
// documents, each against the syntax's XSD (UBL 2.1 or CII D16B) and the official EN 16931 schematron
// (compiled XSLT), both compiled once at start. A request on stdin is a header line
// "<syntax> <byte length>" (syntax: ubl | cii) followed by that many bytes of XML; the answer is one line
// of JSON on stdout: {"schema":[messages], "failed":[{"id","flag","location","text"}]}, where "failed"
// lists every failed assertion of the schematron (flag "fatal" = error, "warning"). Reading only: it
// fetches nothing (no DTD, no external entity) and writes nothing but its answers.
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.XMLConstants;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.Schema;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import net.sf.saxon.s9api.Processor;
import net.sf.saxon.s9api.XPathCompiler;
import net.sf.saxon.s9api.XPathSelector;
import net.sf.saxon.s9api.XdmDestination;
import net.sf.saxon.s9api.XdmItem;
import net.sf.saxon.s9api.XdmNode;
import net.sf.saxon.s9api.XsltExecutable;
import net.sf.saxon.s9api.XsltTransformer;
import org.w3c.dom.ls.DOMImplementationLS;
import org.w3c.dom.ls.LSInput;
import org.xml.sax.ErrorHandler;
import org.xml.sax.SAXParseException;

public final class EInvoiceValidator {
  private static final class Syntax {
    final Schema schema;
    /** UBL: the CreditNote schema (a schema set with both roots fails on their shared imports). */
    final Schema creditNoteSchema;
    final XsltExecutable schematron;

    Syntax(Schema schema, Schema creditNoteSchema, XsltExecutable schematron) {
      this.schema = schema;
      this.creditNoteSchema = creditNoteSchema;
      this.schematron = schematron;
    }
  }

  private static final String UBL_CREDIT_NOTE_NS = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";

  public static void main(String[] args) throws Exception {
    File root = new File(args[0]);
    Processor saxon = new Processor(false);
    SchemaFactory xsd = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
    // The schemas import each other by relative path only; nothing is fetched from the network.
    xsd.setProperty(XMLConstants.ACCESS_EXTERNAL_DTD, "");
    xsd.setProperty(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "file");
    // UBL imports these by namespace alone (no schemaLocation): each maps to its packaged file.
    Map<String, File> imports = Map.of(
        "urn:un:unece:uncefact:data:specification:CoreComponentTypeSchemaModule:2", new File(root, "schemas/imports/CCTS_CCT_SchemaModule.xsd"),
        "http://www.w3.org/2000/09/xmldsig#", new File(root, "schemas/imports/xmldsig-core-schema.xsd"),
        "http://uri.etsi.org/01903/v1.3.2#", new File(root, "schemas/imports/XAdES01903v132-201601.xsd"),
        "http://uri.etsi.org/01903/v1.4.1#", new File(root, "schemas/imports/XAdES01903v141-201601.xsd"));
    DOMImplementationLS ls = (DOMImplementationLS) DocumentBuilderFactory.newInstance().newDocumentBuilder().getDOMImplementation();
    xsd.setResourceResolver((type, namespace, publicId, systemId, baseUri) -> {
      File file = systemId == null && namespace != null ? imports.get(namespace) : null;
      if (file == null) return null;
      LSInput input = ls.createLSInput();
      input.setSystemId(file.toURI().toString());
      return input;
    });
    Syntax ubl = new Syntax(
        xsd.newSchema(new File(root, "schemas/ubl21/maindoc/UBL-Invoice-2.1.xsd")),
        xsd.newSchema(new File(root, "schemas/ubl21/maindoc/UBL-CreditNote-2.1.xsd")),
        saxon.newXsltCompiler().compile(new StreamSource(new File(root, "schematron/ubl/EN16931-UBL-validation.xslt"))));
    Syntax cii = new Syntax(
        xsd.newSchema(new File(root, "schemas/d16b/data/standard/CrossIndustryInvoice_100pD16B.xsd")),
        null,
        saxon.newXsltCompiler().compile(new StreamSource(new File(root, "schematron/cii/EN16931-CII-validation.xslt"))));
    XPathCompiler xpath = saxon.newXPathCompiler();
    xpath.declareNamespace("svrl", "http://purl.oclc.org/dsdl/svrl");

    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
    out.println("{\"ready\":true}");
    String header;
    while ((header = readLine(in)) != null) {
      if (header.isBlank()) continue;
      String[] parts = header.trim().split(" ");
      byte[] xml = new byte[Integer.parseInt(parts[1])];
      in.readFully(xml);
      Syntax syntax = "cii".equals(parts[0]) ? cii : ubl;
      StringBuilder answer = new StringBuilder("{\"schema\":[");
      boolean creditNote = syntax.creditNoteSchema != null && new String(xml, StandardCharsets.UTF_8).contains(UBL_CREDIT_NOTE_NS);
      List<String> schemaErrors = validateSchema(creditNote ? syntax.creditNoteSchema : syntax.schema, xml);
      for (int i = 0; i < schemaErrors.size(); i++) answer.append(i > 0 ? "," : "").append(json(schemaErrors.get(i)));
      answer.append("],\"failed\":[");
      try {
        XsltTransformer transformer = syntax.schematron.load();
        transformer.setSource(new StreamSource(new ByteArrayInputStream(xml), "urn:invoicing:einvoice"));
        XdmDestination svrl = new XdmDestination();
        transformer.setDestination(svrl);
        transformer.transform();
        XPathSelector failed = xpath.compile("//svrl:failed-assert").load();
        failed.setContextItem(svrl.getXdmNode());
        boolean first = true;
        for (XdmItem item : failed) {
          XdmNode node = (XdmNode) item;
          answer.append(first ? "" : ",").append("{\"id\":").append(json(attr(node, "id")))
              .append(",\"flag\":").append(json(attr(node, "flag")))
              .append(",\"location\":").append(json(attr(node, "location")))
              .append(",\"text\":").append(json(node.getStringValue().trim())).append('}');
          first = false;
        }
        answer.append("]}");
      } catch (Exception e) {
        answer.setLength(0);
        answer.append("{\"schema\":[").append(json("not well-formed or not transformable: " + e.getMessage())).append("],\"failed\":[]}");
      }
      out.println(answer);
    }
  }

  private static List<String> validateSchema(Schema schema, byte[] xml) {
    List<String> errors = new ArrayList<>();
    Validator validator = schema.newValidator();
    try {
      validator.setProperty(XMLConstants.ACCESS_EXTERNAL_DTD, "");
      validator.setProperty(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
      validator.setErrorHandler(new ErrorHandler() {
        public void warning(SAXParseException e) {}
        public void error(SAXParseException e) { errors.add(e.getLineNumber() + ":" + e.getColumnNumber() + " " + e.getMessage()); }
        public void fatalError(SAXParseException e) { errors.add(e.getLineNumber() + ":" + e.getColumnNumber() + " " + e.getMessage()); }
      });
      validator.validate(new StreamSource(new ByteArrayInputStream(xml)));
    } catch (Exception e) {
      if (errors.isEmpty()) errors.add(String.valueOf(e.getMessage()));
    }
    return errors;
  }

  private static String attr(XdmNode node, String name) {
    String value = node.getAttributeValue(new net.sf.saxon.s9api.QName(name));
    return value == null ? "" : value;
  }

  private static String readLine(DataInputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = in.read()) != -1 && c != '\n') line.append((char) c);
    return c == -1 && line.length() == 0 ? null : line.toString();
  }

  private static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
