extension UInt8 {
    /// Two lowercase hex digits, for error messages (`0x\(byte.hexDigits)`) and run ids.
    package var hexDigits: String {
        let digits = String(self, radix: 16, uppercase: false)
        return self < 0x10 ? "0" + digits : digits
    }
}
